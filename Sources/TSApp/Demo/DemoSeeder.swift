import TSCrypto
import TSDomain
import TSJSON
import TSRoutes

/// Demo data for `serve --demo`: enough for every screen of the iOS app to show something.
/// Seeded through the domain services, so counters, badges and notifications are consistent.
public enum DemoSeeder {
    public struct DemoUser: Sendable {
        public let username: String
        public let password: String
        public let firstName: String
    }

    public static let users: [DemoUser] = [
        DemoUser(username: "alice", password: "alice-password", firstName: "Alice"),
        DemoUser(username: "bob", password: "bob-password", firstName: "Bob"),
        DemoUser(username: "carol", password: "carol-password", firstName: "Carol"),
    ]

    /// The demo users of a server listening on `host`. On loopback, the published passwords
    /// above (the README's and the inspector's). On any other address (`--host 0.0.0.0`, a LAN
    /// address, a container) a published password would let anyone on that network log in as
    /// alice, so each start draws random ones, shown only on the console (and so in
    /// `docker compose logs`).
    public static func users(listeningOn host: String) -> (users: [DemoUser], published: Bool) {
        if listensOnlyOnLoopback(host) { return (users, true) }
        return (users.map { DemoUser(username: $0.username, password: SecureRandom.hexString(bytes: 12), firstName: $0.firstName) }, false)
    }

    /// `127.x.y.z`, `::1` or `localhost`: no other machine can connect.
    public static func listensOnlyOnLoopback(_ host: String) -> Bool {
        host == "localhost" || LocalOnly.isLoopback(host)
    }

    /// Seeds `users` when the database has no users; returns false when it already had data. A
    /// database seeded earlier gets `users`' passwords when they are not the published ones, so a
    /// restart on another address does not leave the published passwords working.
    @discardableResult
    public static func seedIfEmpty(_ domain: TouchSyncDomain, users: [DemoUser] = users) async throws -> Bool {
        let count = try await domain.db.read { c in try c.scalarInt("SELECT COUNT(*) FROM users") } ?? 0
        guard count == 0 else {
            for u in users where u.password != Self.users.first(where: { $0.username == u.username })?.password {
                let hash = await domain.auth.hashPassword(u.password)
                _ = try await domain.db.write { c in
                    try c.run("UPDATE users SET password_hash = ? WHERE username = ?", [.text(hash), .text(u.username)])
                }
            }
            return false
        }

        var ids: [String] = []
        for u in users {
            let hash = await domain.auth.hashPassword(u.password)
            let user = try await domain.auth.createUser(username: u.username, passwordHash: hash, firstName: u.firstName,
                                                        avatarUrl: "https://picsum.photos/seed/\(u.username)/200")
            ids.append(user.id)
        }
        let (alice, bob, carol) = (ids[0], ids[1], ids[2])

        let design = try await domain.rooms.create(actor: alice, input: Input(["name": "Design Team", "memberIds": [.string(bob), .string(carol)]]))
        let weekend = try await domain.rooms.create(actor: bob, input: Input(["memberIds": [.string(alice)]]))

        let kinds: [(String, JSONObject)] = [
            ("note", ["content": "Kick-off notes"]),
            ("photo", ["imageUrl": "https://picsum.photos/seed/p1/800/600", "thumbnailUrl": "https://picsum.photos/seed/p1/200/150"]),
            ("audio", ["audioUrl": "https://example.com/audio/standup.m4a", "duration": 42.5]),
            ("video", ["videoUrl": "https://example.com/video/demo.mp4", "thumbnailUrl": "https://picsum.photos/seed/v1/200/150", "duration": 12]),
            ("text", ["content": "Ship it on Friday"]),
            ("link", ["content": "https://developer.apple.com/documentation/"]),
        ]
        var elementIds: [(room: String, id: String)] = []
        let authors = [alice, bob, carol]
        for i in 0..<24 {
            let (type, extra) = kinds[i % kinds.count]
            var body: JSONObject = ["type": .string(type), "positionX": .double(Double(40 + (i % 6) * 160)),
                                    "positionY": .double(Double(60 + (i / 6) * 180)), "width": 150, "height": 150]
            for (k, v) in extra { body[k] = v }
            let roomId = i < 18 ? design.id : weekend.id
            let author = i < 18 ? authors[i % 3] : [bob, alice][i % 2]
            let e = try await domain.elements.create(roomId: roomId, actor: author, input: Input(body), originSocketId: nil)
            elementIds.append((roomId, e.id))
        }
        for (i, e) in elementIds.enumerated() where i % 2 == 0 {
            let reactors = e.room == design.id ? [alice, bob, carol] : [alice, bob]
            for r in reactors.prefix(1 + i % reactors.count) {
                _ = try await domain.reactions.toggle(roomId: e.room, elementId: e.id, actor: r, originSocketId: nil)
            }
        }
        let lines = [(alice, "Welcome to the Design Team board!"), (bob, "I added the kick-off photos."), (carol, "Love the new palette."),
                     (bob, "Can we review on Thursday?"), (carol, "Thursday works for me.")]
        for (author, text) in lines {
            _ = try await domain.messages.send(roomId: design.id, actor: author, input: Input(["text": .string(text)]), originSocketId: nil)
        }
        _ = try await domain.messages.send(roomId: weekend.id, actor: bob, input: Input(["text": "Hike on Saturday?"]), originSocketId: nil)

        for i in 0..<30 {
            let author = authors[i % 3]
            let post = try await domain.posts.create(actor: author, input: Input(["content": .string("Demo post #\(i + 1)"),
                                                                                  "imageUrl": i % 3 == 0 ? .string("https://picsum.photos/seed/post\(i)/600/400") : .null]))
            for (k, u) in authors.enumerated() where (i + k) % 2 == 0 {
                _ = try await domain.posts.set(.like, on: true, postId: post.id, actor: u)
            }
            if i % 4 == 0 { _ = try await domain.posts.set(.save, on: true, postId: post.id, actor: alice) }
            if i % 5 == 0 { _ = try await domain.posts.set(.save, on: true, postId: post.id, actor: bob) }
        }
        return true
    }
}
