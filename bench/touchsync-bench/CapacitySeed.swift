import Foundation
import TSJSON
import TSSockets

/// Who is in which room (bench/README.md, "Capacity"). Users come in cohorts of 60; a cohort has
/// 9 rooms of 20 members and every user is in 3 of them, one from each of three ways of cutting
/// the cohort in thirds, so a user's three rooms share few members (user p = 20a + b is in
/// thirds a, (a + b) mod 3 and (a + 2b) mod 3; each of the nine sets has exactly 20 members).
enum CapacityLayout {
    static let cohortSize = 60
    static let roomsPerCohort = 9
    static let roomSize = 20
    static let postsPerCohort = 20

    static func cohorts(forUsers n: Int) -> Int { (n + cohortSize - 1) / cohortSize }

    /// The 3 rooms (global indexes) of user `u`.
    static func rooms(ofUser u: Int) -> [Int] {
        let c = u / cohortSize, p = u % cohortSize, a = p / 20, b = p % 20
        return [c * roomsPerCohort + a, c * roomsPerCohort + 3 + (a + b) % 3, c * roomsPerCohort + 6 + (a + 2 * b) % 3]
    }

    /// The members (global user indexes) of room `r`, in cohort order.
    static func members(ofRoom r: Int) -> [Int] {
        let c = r / roomsPerCohort, k = r % roomsPerCohort
        return (0..<cohortSize).filter { rooms(ofUser: c * cohortSize + $0).contains(c * roomsPerCohort + k) }.map { c * cohortSize + $0 }
    }
}

/// Ids and tokens of the seeded users, rooms, elements and posts.
struct CapacitySeed {
    var userIds: [String] = []
    var tokens: [String] = []
    /// Per room: its id and its seeded elements' ids.
    var roomIds: [String] = []
    var roomElements: [[String]] = []
    /// Per cohort: the 20 posts its users ask interaction-state about.
    var cohortPosts: [[String]] = []
    var elementsPerRoom = 100

    var users: Int { userIds.count }

    /// The fixture document (docs/test-mode.md) of cohort `c`: its 60 users (one password, so
    /// the server hashes it once), 9 rooms of `elements` elements with about one heart each and 3
    /// messages, and 20 posts liked and saved by its users.
    static func fixtureDocument(cohort c: Int, elements: Int) -> String {
        let size = CapacityLayout.cohortSize
        func user(_ p: Int) -> String { "cap\(c)u\(p)" }
        var users: [String] = [], rooms: [String] = [], els: [String] = [], hearts: [String] = [], messages: [String] = []
        for p in 0..<size {
            users.append("{\"ref\":\"\(user(p))\",\"username\":\"\(user(p))\",\"password\":\"capacity-password\",\"firstName\":\"User \(p)\"}")
        }
        let types = ["note", "note", "photo", "text", "link"]
        for k in 0..<CapacityLayout.roomsPerCohort {
            let members = CapacityLayout.members(ofRoom: c * CapacityLayout.roomsPerCohort + k).map { $0 % size }
            rooms.append("{\"ref\":\"r\(k)\",\"createdBy\":\"\(user(members[0]))\",\"members\":[\(members.dropFirst().map { "\"\(user($0))\"" }.joined(separator: ","))]}")
            for j in 0..<elements {
                let type = types[j % types.count]
                var media = ""
                if type == "photo" {
                    media = ",\"imageUrl\":\"https://picsum.photos/seed/c\(c)r\(k)e\(j)/800/600\",\"thumbnailUrl\":\"https://picsum.photos/seed/c\(c)r\(k)e\(j)/200/150\""
                } else if type == "link" {
                    media = ",\"content\":\"https://example.com/article/\(c)/\(k)/\(j)\""
                } else {
                    media = ",\"content\":\"Seeded \(type) \(j) of room \(k): a line or two of text, as people write on a board.\""
                }
                els.append("{\"ref\":\"r\(k)e\(j)\",\"room\":\"r\(k)\",\"createdBy\":\"\(user(members[j % members.count]))\",\"type\":\"\(type)\""
                           + ",\"positionX\":\((j % 10) * 120),\"positionY\":\((j / 10) * 120),\"width\":150,\"height\":150\(media)}")
                for t in 0..<(j % 3) { hearts.append("{\"element\":\"r\(k)e\(j)\",\"user\":\"\(user(members[(j + 1 + t) % members.count]))\"}") }
            }
            for m in 0..<3 { messages.append("{\"room\":\"r\(k)\",\"user\":\"\(user(members[m]))\",\"text\":\"Message \(m) in room \(k)\"}") }
        }
        var posts: [String] = [], likes: [String] = [], saves: [String] = []
        for i in 0..<CapacityLayout.postsPerCohort {
            posts.append("{\"ref\":\"p\(i)\",\"author\":\"\(user(i * 3 % size))\",\"content\":\"Post \(i) of cohort \(c)\"}")
        }
        for p in 0..<size {
            for i in [p % 20, (p + 7) % 20, (p + 13) % 20] { likes.append("{\"post\":\"p\(i)\",\"user\":\"\(user(p))\"}") }
            saves.append("{\"post\":\"p\((p + 3) % 20)\",\"user\":\"\(user(p))\"}")
        }
        func list(_ name: String, _ items: [String]) -> String { "\"\(name)\":[\(items.joined(separator: ","))]" }
        return "{" + [list("users", users), list("rooms", rooms), list("elements", els), list("reactions", hearts), list("messages", messages),
                      list("posts", posts), list("likes", likes), list("saves", saves)].joined(separator: ",") + "}"
    }

    /// Reads the answer of cohort `c`'s fixture load into the seed's arrays (which must already
    /// be sized for every cohort).
    mutating func absorb(cohort c: Int, answer: [UInt8]) throws {
        let v = try JSONValue.parse(answer)
        guard let data = v["data"], let users = data["users"], let rooms = data["rooms"], let elements = data["elements"], let posts = data["posts"] else {
            throw BenchError("fixtures of cohort \(c): unexpected answer \(String(decoding: answer.prefix(300), as: UTF8.self))")
        }
        for p in 0..<CapacityLayout.cohortSize {
            let u = users["cap\(c)u\(p)"]
            guard let id = u?["id"]?.stringValue, let token = u?["token"]?.stringValue else { throw BenchError("fixtures of cohort \(c): no user \(p)") }
            userIds[c * CapacityLayout.cohortSize + p] = id
            tokens[c * CapacityLayout.cohortSize + p] = token
        }
        for k in 0..<CapacityLayout.roomsPerCohort {
            guard let id = rooms["r\(k)"]?.stringValue else { throw BenchError("fixtures of cohort \(c): no room \(k)") }
            let r = c * CapacityLayout.roomsPerCohort + k
            roomIds[r] = id
            roomElements[r] = try (0..<elementsPerRoom).map { j in
                guard let e = elements["r\(k)e\(j)"]?.stringValue else { throw BenchError("fixtures of cohort \(c): no element \(k)/\(j)") }
                return e
            }
        }
        cohortPosts[c] = try (0..<CapacityLayout.postsPerCohort).map { i in
            guard let id = posts["p\(i)"]?.stringValue else { throw BenchError("fixtures of cohort \(c): no post \(i)") }
            return id
        }
    }

    /// Seeds `users` users (rounded up to whole cohorts) through `POST /api/test/fixtures` of a
    /// test-mode server, `inFlight` cohorts at a time, after `POST /api/test/reset`.
    static func load(users: Int, elements: Int, host: String, port: Int, loop: EventLoop, inFlight: Int = 4) throws -> CapacitySeed {
        let (status, body) = try LoopHTTP.request(loop: loop, host: host, port: port, "POST", "/api/test/reset", headers: ["X-TouchSync-Test: 1"])
        guard status == 200 else {
            throw BenchError("POST /api/test/reset answered \(status) (\(String(decoding: body.prefix(200), as: UTF8.self))): "
                             + "seeding needs a server in --test-mode; or let the tool start one with --server-bin")
        }
        let cohorts = CapacityLayout.cohorts(forUsers: users)
        let loader = FixtureLoad(cohorts: cohorts, elements: elements, host: host, port: port, loop: loop)
        let started = Date()
        try loader.run(inFlight: inFlight)
        say(String(format: "seeded %d users, %d rooms of %d elements in %.1f s", cohorts * CapacityLayout.cohortSize,
                     cohorts * CapacityLayout.roomsPerCohort, elements, Date().timeIntervalSince(started)))
        return loader.seed
    }

    // MARK: the seed file (`--seed-file`, and `seed.json` in the data directory)

    func save(to path: String) throws {
        var rooms: [JSONValue] = []
        for r in 0..<roomIds.count {
            rooms.append(.object(["id": .string(roomIds[r]), "elements": .array(roomElements[r].map { .string($0) })]))
        }
        let doc: JSONValue = .object([
            "elementsPerRoom": .int(Int64(elementsPerRoom)),
            "users": .array((0..<users).map { .array([.string(userIds[$0]), .string(tokens[$0])]) }),
            "rooms": .array(rooms),
            "cohortPosts": .array(cohortPosts.map { .array($0.map { .string($0) }) }),
        ])
        try Data(doc.serialized()).write(to: URL(fileURLWithPath: path))
    }

    static func read(from path: String) throws -> CapacitySeed {
        guard let data = FileManager.default.contents(atPath: path) else { throw BenchError("cannot read the seed file \(path)") }
        let v = try JSONValue.parse(Array(data))
        var s = CapacitySeed()
        s.elementsPerRoom = Int(v["elementsPerRoom"]?.intValue ?? 100)
        for u in v["users"]?.arrayValue ?? [] {
            s.userIds.append(u[0]?.stringValue ?? "")
            s.tokens.append(u[1]?.stringValue ?? "")
        }
        for r in v["rooms"]?.arrayValue ?? [] {
            s.roomIds.append(r["id"]?.stringValue ?? "")
            s.roomElements.append((r["elements"]?.arrayValue ?? []).compactMap(\.stringValue))
        }
        s.cohortPosts = (v["cohortPosts"]?.arrayValue ?? []).map { ($0.arrayValue ?? []).compactMap(\.stringValue) }
        guard s.users > 0, s.users % CapacityLayout.cohortSize == 0, s.roomIds.count == s.users / CapacityLayout.cohortSize * CapacityLayout.roomsPerCohort,
              s.cohortPosts.count == s.users / CapacityLayout.cohortSize else {
            throw BenchError("the seed file \(path) does not have the capacity layout (whole cohorts of 60 users, 9 rooms and 20 posts each)")
        }
        return s
    }
}

/// The fixture loads of a seed, `inFlight` cohorts at a time on the loop (the server's writer
/// group-commits the concurrent loads).
// @unchecked Sendable: loop-confined, except `seed`/`failure` read after `done` is signalled.
private final class FixtureLoad: @unchecked Sendable {
    let cohorts: Int
    let elements: Int
    let host: String
    let port: Int
    let loop: EventLoop
    var seed = CapacitySeed()
    private var next = 0
    private var finished = 0
    private var failure: Error?
    private let done = DispatchSemaphore(value: 0)

    init(cohorts: Int, elements: Int, host: String, port: Int, loop: EventLoop) {
        self.cohorts = cohorts
        self.elements = elements
        self.host = host
        self.port = port
        self.loop = loop
        let users = cohorts * CapacityLayout.cohortSize, rooms = cohorts * CapacityLayout.roomsPerCohort
        seed.userIds = Array(repeating: "", count: users)
        seed.tokens = Array(repeating: "", count: users)
        seed.roomIds = Array(repeating: "", count: rooms)
        seed.roomElements = Array(repeating: [], count: rooms)
        seed.cohortPosts = Array(repeating: [], count: cohorts)
        seed.elementsPerRoom = elements
    }

    func run(inFlight: Int) throws {
        loop.execute {
            for i in 0..<min(inFlight, self.cohorts) {
                do { self.send(on: try HTTPBenchClient.open(host: self.host, port: self.port, loop: self.loop, id: 8_000_000 + UInt64(i))) } catch {
                    self.fail(error)
                }
            }
        }
        done.wait()
        if let failure { throw failure }
    }

    private func fail(_ e: Error) {
        guard failure == nil else { return }
        failure = e
        done.signal()
    }

    private func send(on c: HTTPBenchClient) {
        guard failure == nil, next < cohorts else {
            c.connection.close(.local("seeded"))
            return
        }
        let cohort = next
        next += 1
        let doc = CapacitySeed.fixtureDocument(cohort: cohort, elements: elements)
        c.request("POST", "/api/test/fixtures", token: nil, body: doc, headers: ["X-TouchSync-Test: 1"]) { status, body in
            guard status == 201 || status == 200 else {
                self.fail(BenchError("POST /api/test/fixtures (cohort \(cohort)) answered \(status): \(String(decoding: body.prefix(300), as: UTF8.self))"))
                return
            }
            do { try self.seed.absorb(cohort: cohort, answer: Array(body)) } catch {
                self.fail(error)
                return
            }
            self.finished += 1
            if self.finished % max(1, self.cohorts / 10) == 0 || self.finished == self.cohorts {
                say("  seeded \(self.finished * CapacityLayout.cohortSize) of \(self.cohorts * CapacityLayout.cohortSize) users")
            }
            if self.finished == self.cohorts {
                self.done.signal()
                c.connection.close(.local("seeded"))
                return
            }
            self.send(on: c)
        }
    }
}
