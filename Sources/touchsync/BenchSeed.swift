import ArgumentParser
import Foundation
import TSApp
import TSDomain
import TSJSON

/// Hidden `touchsync bench-seed`: fills an empty database with the data set of `bench/`
/// (bench/README.md) through the domain services and writes ids and tokens, one per line, to
/// `--out`. Writes run concurrently so the single writer group-commits them.
struct BenchSeed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench-seed",
                                                    abstract: "Seed the benchmark data set (bench/README.md).", shouldDisplay: false)

    @OptionGroup var common: CommonOptions

    @Option(help: "Directory for the id and token files.")
    var out: String = "bench/.data"

    @Option(help: "Users (all members of the toggle and join rooms; the first 100 are the members of the fan-out and create rooms).")
    var users: Int = 1000

    @Option(help: "Elements in the join room, and in the toggle room unless --toggle-elements says otherwise.")
    var elements: Int = 100

    @Option(help: "Elements in the toggle room (default: --elements); a test that only joins needs none.")
    var toggleElements: Int?

    @Option(help: "Rooms of the my-rooms user.")
    var rooms: Int = 50

    @Option(help: "Posts for interaction-state.")
    var posts: Int = 50

    func run() async throws {
        let config = try common.load(extra: ["log.level": "warning"])
        let server = try TouchSyncServer(configuration: config, role: .tool)
        do {
            try await seed(server)
        } catch {
            await server.domain.notifications.stop()
            server.db.close()
            throw error
        }
        // Seeding woke the notification worker: let it finish before the database closes.
        await server.domain.notifications.stop()
        server.db.close()
    }

    private func seed(_ server: TouchSyncServer) async throws {
        let d = server.domain
        guard try await d.db.read({ c in try c.scalarInt("SELECT COUNT(*) FROM users") }) == 0 else {
            throw CleanExit.message("touchsync: bench-seed needs an empty database (\(server.databasePath) has users)")
        }
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let hash = await d.auth.hashPassword("bench-password")

        // Users, 64 writes in flight at a time.
        let userIds = try await Self.concurrently(0..<users) { i in
            try await d.auth.createUser(username: "bench\(i)", passwordHash: hash, firstName: "Bench \(i)", avatarUrl: nil).id
        }
        let owner = userIds[0]

        // A room of the first `members` users (created with 100, the most `POST /api/rooms` takes, then added).
        func bigRoom(_ name: String, members: Int) async throws -> String {
            let members = min(members, users)
            let room = try await d.rooms.create(actor: owner, input: Input(["name": .string(name),
                                                                           "memberIds": .array(userIds[1..<min(100, members)].map { .string($0) })]))
            if members > 100 {
                _ = try await Self.concurrently(100..<members) { i in
                    try await d.rooms.addMember(roomId: room.id, actor: owner, input: Input(["userId": .string(userIds[i])]))
                }
            }
            return room.id
        }

        let toggleRoom = try await bigRoom("bench toggle", members: users)
        let toggleElements = try await Self.concurrently(0..<(self.toggleElements ?? elements)) { i in
            try await d.elements.create(roomId: toggleRoom, actor: userIds[i % users], input: Self.element(i), originSocketId: nil).id
        }
        let joinRoom = try await bigRoom("bench join", members: users)
        _ = try await Self.concurrently(0..<elements) { i in
            try await d.elements.create(roomId: joinRoom, actor: userIds[i % users], input: Self.element(i), originSocketId: nil).id
        }
        let fanoutRoom = try await bigRoom("bench fanout", members: 100)
        let createRoom = try await bigRoom("bench create", members: 100)

        // The my-rooms user: a member of `rooms` small rooms, each with a few elements and messages.
        let roomy = try await d.auth.createUser(username: "bench-roomy", passwordHash: hash, firstName: "Roomy", avatarUrl: nil).id
        _ = try await Self.concurrently(0..<rooms) { r in
            let room = try await d.rooms.create(actor: userIds[r % users], input: Input(["name": .string("roomy \(r)"),
                                                                                         "memberIds": [.string(roomy), .string(userIds[(r + 1) % users])]]))
            for i in 0..<4 { _ = try await d.elements.create(roomId: room.id, actor: userIds[r % users], input: Self.element(i), originSocketId: nil) }
            for i in 0..<3 {
                _ = try await d.messages.send(roomId: room.id, actor: userIds[r % users], input: Input(["text": .string("message \(i)")]), originSocketId: nil)
            }
            return room.id
        }

        // Posts, half of them liked and a third saved by the first user.
        let postIds = try await Self.concurrently(0..<posts) { i in
            let p = try await d.posts.create(actor: userIds[i % users], input: Input(["content": .string("bench post \(i)")]))
            if i % 2 == 0 { _ = try await d.posts.set(.like, on: true, postId: p.id, actor: owner) }
            if i % 3 == 0 { _ = try await d.posts.set(.save, on: true, postId: p.id, actor: owner) }
            return p.id
        }

        var tokens: [String] = []
        for id in userIds { tokens.append(await d.auth.issueToken(userId: id)) }
        let roomyToken = await d.auth.issueToken(userId: roomy)
        let files: [(String, [String])] = [
            ("tokens.txt", tokens), ("user-ids.txt", userIds), ("member-tokens.txt", Array(tokens.prefix(100))),
            ("toggle-room.txt", [toggleRoom]), ("toggle-elements.txt", toggleElements),
            ("join-room.txt", [joinRoom]), ("fanout-room.txt", [fanoutRoom]), ("create-room.txt", [createRoom]),
            ("roomy-token.txt", [roomyToken]), ("post-ids.txt", postIds),
        ]
        for (name, lines) in files {
            try (lines.joined(separator: "\n") + "\n").write(toFile: "\(out)/\(name)", atomically: true, encoding: .utf8)
        }
        print("seeded \(users) users, rooms toggle/join/fanout/create, \(rooms) rooms for bench-roomy, \(posts) posts into \(server.databasePath); ids in \(out)/")
    }

    static func element(_ i: Int) -> Input {
        Input(["type": "note", "content": .string("bench element \(i)"), "positionX": .double(Double(i % 10) * 160),
               "positionY": .double(Double(i / 10) * 160), "width": 150, "height": 150])
    }

    /// Runs `body` for every index with at most 64 in flight; results in index order.
    static func concurrently<T: Sendable>(_ range: Range<Int>, _ body: @escaping @Sendable (Int) async throws -> T) async throws -> [T] {
        var results = [T?](repeating: nil, count: range.count)
        try await withThrowingTaskGroup(of: (Int, T).self) { group in
            var next = range.lowerBound
            while next < range.upperBound && next < range.lowerBound + 64 {
                let i = next
                group.addTask { (i, try await body(i)) }
                next += 1
            }
            while let (i, value) = try await group.next() {
                results[i - range.lowerBound] = value
                if next < range.upperBound {
                    let j = next
                    group.addTask { (j, try await body(j)) }
                    next += 1
                }
            }
        }
        return results.map { $0! }
    }
}
