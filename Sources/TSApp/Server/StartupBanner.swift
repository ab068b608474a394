import TSDomain

/// The start-up text: one line a person can act on, and in demo mode each demo user's token.
public enum StartupBanner {
    public static func text(base: String, databasePath: String, server: TouchSyncServer, demo: Bool) async -> String {
        var lines = ["TouchSync \(BuildInfo.version) listening on \(base)  (Socket.IO \(base)/socket.io/, database \(databasePath))"]
        if let tls = server.tls {  // tls: HTTPS/WSS URLs
            let ws = server.webSocketScheme + base.dropFirst(server.scheme.count)
            lines.append("HTTPS/WSS: \(tls.summary); WebSocket \(ws)/socket.io/?EIO=4&transport=websocket; SIGHUP reloads the certificate")
            if let redirect = server.httpsRedirect {
                lines.append("HTTP redirect: http://\(redirect.configuration.host):\(redirect.port) answers 308 to \(base) (except /health)")
            }
        }
        if server.servesInspector {
            lines.append("Inspector: \(base)/inspector")
        }
        if server.testMode {
            lines.append("Test mode: POST \(base)/api/test/reset, POST \(base)/api/test/fixtures, GET \(base)/api/test/events?since=0 (docs/test-mode.md)")
            // A developer who expects 429s learns here why none come (docs/test-mode.md "Write limits").
            lines.append("Write limits (limits.*) are off in test mode: POST \(base)/api/test/limits {\"enabled\": true} turns them on")
        }
        if demo {
            if server.demoPasswordsPublished {
                lines.append("Demo users (password in parentheses):")
            } else {
                lines.append("Demo users (password in parentheses): the server listens beyond this machine, so the published demo "
                             + "passwords are off and these are random for this start, shown only here.")
            }
            var tokens: [String: (id: String, token: String)] = [:]
            for u in server.demoUsers {
                guard let id = try? await server.domain.auth.userId(forUsername: u.username) else { continue }
                let token = await server.domain.auth.issueToken(userId: id)
                tokens[u.username] = (id, token)
                lines.append("  \(u.username) (\(u.password))")
                lines.append("    Authorization: Bearer \(token)")
                lines.append("    curl -H 'Authorization: Bearer \(token)' \(base)/api/rooms/my-rooms")
            }
            lines += await tryIt(base: base, server: server, tokens: tokens)
        }
        return lines.joined(separator: "\n")
    }

    /// Where the tour's virtualenv goes: Debian 12 (and Homebrew Python) refuse a system-wide
    /// `pip install` (PEP 668, externally managed), so the tour creates its own environment.
    static let tourVenv = "~/.touchsync-venv"

    /// A two-step tour on the demo data: watch a room as alice, heart a photo as bob. The `curl`
    /// toggles, so the photo starts every `--demo` start without bob's heart (a heart left by the
    /// last tour is taken back here): the printed command then adds it, however often it is run.
    static func tryIt(base: String, server: TouchSyncServer, tokens: [String: (id: String, token: String)]) async -> [String] {
        guard let alice = tokens["alice"], let bob = tokens["bob"],
              let room = try? await server.domain.rooms.myRooms(viewer: alice.id).first(where: { $0.name == "Design Team" }),
              let element = try? await server.domain.elements.list(roomId: room.id, viewer: bob.id).first(where: { $0.type == .photo })
        else { return [] }
        if element.reactions?.hasReacted == true {
            _ = try? await server.domain.reactions.toggle(roomId: room.id, elementId: element.id, actor: bob.id, originSocketId: nil)
        }
        return [
            "Try it: watch the Design Team room as alice, then heart a photo as bob.",
            "  Once: a Python virtualenv with the Socket.IO client (Debian/Ubuntu: sudo apt-get install python3-venv)",
            "  python3 -m venv \(tourVenv) && \(tourVenv)/bin/pip install -q \"python-socketio[client]==5.18.1\"",
            "  \(tourVenv)/bin/python -c \"import socketio; s = socketio.Client(); s.on('*', lambda e, *a: print(e, a)); "
                + "s.connect('\(base)', auth={'token': '\(alice.token)'}); print(s.call('room:join', {'roomId': '\(room.id)'})); s.wait()\"",
            "  curl -X POST -H 'Authorization: Bearer \(bob.token)' \(base)/api/rooms/\(room.id)/elements/\(element.id)/reactions/toggle",
        ]
    }
}
