"""testssl.sh against `touchsync serve --tls-cert … --tls-key …` (docs/tls-testssl.md): no protocol below
TLS 1.2, no weak cipher, no known vulnerability flagged. testssl's JSON output (--jsonfile) is
parsed finding by finding. Loopback only: an IP address (no DNS), no "phone out" checks.

Debian's `testssl.sh` package (`testssl` on PATH; scripts/test installs it under CI as root). The
scan takes about a minute, so it runs once: on the poll(2) re-run of the suite it skips visibly
(the TLS policy it checks does not depend on the readiness backend). One full run's output is
recorded in docs/tls-testssl.md (TESTSSL_OUTPUT_DIR=dir keeps the run's testssl.json and
testssl.txt there).
"""
import json
import os
import shutil
import subprocess
import tempfile

import pytest

from test_tls import OPENSSL, start_tls_server, stop_tls_server

TESTSSL = shutil.which("testssl") or shutil.which("testssl.sh")

pytestmark = [
    pytest.mark.skipif(OPENSSL is None, reason="the openssl CLI is not installed: the TLS tests generate their certificates with it"),
    pytest.mark.skipif(TESTSSL is None, reason="testssl.sh is not installed (apt-get install testssl.sh)"),
    pytest.mark.skipif(os.environ.get("TOUCHSYNC_SERVER_POLLER") == "poll",
                       reason="testssl.sh runs once, on the default poller (the TLS policy it checks is the same on poll(2))"),
]

# Severities testssl gives a finding (OK/INFO are fine; WARN means a check could not be done).
BAD_SEVERITIES = {"LOW", "MEDIUM", "HIGH", "CRITICAL", "WARN", "FATAL"}

# The vulnerability checks of -U (ids as testssl 3.0 writes them).
VULNERABILITY_IDS = {"heartbleed", "CCS", "ticketbleed", "ROBOT", "secure_renego", "secure_client_renego",
                     "CRIME_TLS", "BREACH", "POODLE_SSL", "fallback_SCSV", "SWEET32", "FREAK", "DROWN",
                     "LOGJAM", "BEAST", "LUCKY13", "RC4"}


@pytest.fixture(scope="module")
def testssl_findings():
    tmp = tempfile.mkdtemp(prefix="touchsync-testssl-")
    server = start_tls_server(os.path.join(tmp), redirect=False)
    try:
        report = os.path.join(tmp, "testssl.json")
        # -p protocols, -s cipher categories, -f forward secrecy, -U vulnerabilities. Server
        # defaults (-S) are left out: they grade the throwaway certificate (no OCSP URI, a CA
        # testssl does not trust), not the server.
        cmd = [TESTSSL, "--quiet", "--color", "0", "--warnings", "off", "--nodns", "none",
               "-p", "-s", "-f", "-U", "--jsonfile", report, f"127.0.0.1:{server.port}"]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp)
        assert os.path.exists(report), f"testssl wrote no JSON (exit {out.returncode}):\n{out.stdout[-3000:]}\n{out.stderr[-2000:]}"
        with open(report) as f:
            findings = json.load(f)
        keep = os.environ.get("TESTSSL_OUTPUT_DIR")
        if keep:
            os.makedirs(keep, exist_ok=True)
            shutil.copy(report, os.path.join(keep, "testssl.json"))
            with open(os.path.join(keep, "testssl.txt"), "w") as f:
                f.write(" ".join(cmd[:-1] + ["127.0.0.1:<port>"]) + "\n" + out.stdout)
        assert isinstance(findings, list) and findings, out.stdout[-3000:]
        yield {x["id"]: x for x in findings}, findings, out.stdout
        stop_tls_server(server)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_testssl_no_protocol_below_tls_1_2(testssl_findings):
    by_id, _, text = testssl_findings
    for old in ("SSLv2", "SSLv3", "TLS1", "TLS1_1"):
        assert old in by_id, f"testssl did not test {old}:\n{text[-2000:]}"
        assert by_id[old]["finding"].startswith("not offered"), by_id[old]
    assert by_id["TLS1_2"]["finding"].startswith("offered"), by_id["TLS1_2"]
    assert by_id["TLS1_3"]["finding"].startswith("offered"), by_id["TLS1_3"]


def test_testssl_no_weak_cipher(testssl_findings):
    by_id, _, text = testssl_findings
    # NULL, anonymous, EXPORT, LOW (64-bit, DES, RC2/4), 3DES/IDEA, obsolete CBC: none offered.
    for category in ("cipherlist_NULL", "cipherlist_aNULL", "cipherlist_EXPORT", "cipherlist_LOW",
                     "cipherlist_3DES_IDEA", "cipherlist_AVERAGE"):
        assert category in by_id, f"testssl did not test {category}:\n{text[-2000:]}"
        assert by_id[category]["finding"].startswith("not offered"), by_id[category]
    assert by_id["cipherlist_STRONG"]["finding"].startswith("offered"), by_id["cipherlist_STRONG"]
    assert by_id["PFS"]["severity"] == "OK", by_id["PFS"]


def test_testssl_flags_no_vulnerability(testssl_findings):
    by_id, _, text = testssl_findings
    missing = VULNERABILITY_IDS - by_id.keys()
    assert not missing, f"testssl did not run {sorted(missing)}:\n{text[-2000:]}"
    for vid in sorted(VULNERABILITY_IDS):
        assert by_id[vid]["severity"] in ("OK", "INFO"), by_id[vid]


def test_testssl_no_finding_above_info(testssl_findings):
    _, findings, _ = testssl_findings
    bad = [x for x in findings if x.get("severity") in BAD_SEVERITIES]
    assert not bad, json.dumps(bad, indent=1)
