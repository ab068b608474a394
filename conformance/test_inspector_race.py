"""The inspector's data browser in a real browser when answers arrive out of order: the page asks
for one kind's rows, the user picks another kind, and the first answer arrives last. Chromium
itself holds the first request (DevTools Fetch interception) until the second kind is drawn, then
lets it through to the real server; the late answer must be dropped, not drawn over the table
the user is looking at."""
import time

from test_inspector import browser, click, fixtures, needs_chromium, rows_text, test_server  # noqa: F401 (fixtures)


def wait_for_event(browser, method, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        for e in browser.events:
            if e["method"] == method:
                return e["params"]
        browser.evaluate("1")  # reads the events that arrived meanwhile
        time.sleep(0.05)
    raise AssertionError(f"no {method} within {timeout} s")


@needs_chromium
def test_a_late_answer_for_one_kind_is_not_drawn_over_the_kind_chosen_after_it(test_server, fixtures, browser):  # noqa: F811
    browser.call("Page.navigate", url=test_server + "/inspector")
    browser.wait_for("document.body && document.body.dataset.ready === '1'", what="the first poll")
    browser.call("Fetch.enable", patterns=[{"urlPattern": "*/inspector/api/browse/users*", "requestStage": "Request"}])
    # The data view opens on its first kind, users: that request is held.
    click(browser, "#tabs button[data-view=data]")
    held = wait_for_event(browser, "Fetch.requestPaused")
    assert "/inspector/api/browse/users" in held["request"]["url"], held["request"]["url"]

    click(browser, "#kinds button[data-kind=rooms]", what="the rooms button")
    browser.wait_for("document.body.dataset.kind === 'rooms' && document.querySelectorAll('#data-body tr[data-key]').length > 0",
                     what="the rooms rows")
    browser.call("Fetch.continueRequest", requestId=held["requestId"])
    # The late answer is handled either way: dropped (counted), or drawn (the kind becomes users).
    browser.wait_for("document.body.dataset.staleAnswers === '1' || document.body.dataset.kind === 'users'",
                     what="the late users answer")

    # Still the rooms the user chose: their title, columns and rows.
    assert browser.evaluate("document.body.dataset.kind") == "rooms"
    assert browser.evaluate("document.getElementById('data-title').textContent") == "Rooms"
    head = browser.evaluate("document.getElementById('data-head').innerText")
    assert "username" not in head, head
    assert any("Design Team" in t for t in rows_text(browser, "#data-body")), rows_text(browser, "#data-body")
    assert browser.exceptions == []
