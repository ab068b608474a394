import TSDomain

/// The start-up text: one line a person can act on, and in demo mode each demo user's token.
public enum StartupBanner {
    public static func text(base: String, databasePath: String, server: TouchSyncServer, demo: Bool) -> String {
        var lines = ["TouchSync \(BuildInfo.version) listening on \(base)  (Socket.IO \(base)/socket.io/, database \(databasePath))"]
        if server.servesInspector {
            lines.append("Inspector: \(base)/inspector")
        }
        if server.testMode {
            lines.append("Test mode: POST \(base)/api/test/reset, POST \(base)/api/test/fixtures, GET \(base)/api/test/events?since=0 (docs/test-mode.md)")
        }
        if demo {
            lines.append("Demo users (password in parentheses):")
            for u in DemoSeeder.users {
                guard let id = try? server.domain.auth.userId(forUsername: u.username) else { continue }
                let token = server.domain.auth.issueToken(userId: id)
                lines.append("  \(u.username) (\(u.password))")
                lines.append("    Authorization: Bearer \(token)")
                lines.append("    curl -H 'Authorization: Bearer \(token)' \(base)/api/rooms/my-rooms")
            }
        }
        return lines.joined(separator: "\n")
    }
}
