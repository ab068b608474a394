import TSDomain
import TSJSON
import TSRoutes

/// Loads one fixture document (`POST /api/test/fixtures`, docs/test-mode.md): users, rooms with
/// members, elements, reactions, messages, posts, likes and saves, whose objects refer to each
/// other by client-chosen `ref`s. Everything goes through the domain services, so counters,
/// badges and notifications are what the same calls over the API would leave.
///
/// The whole document is checked (shape, types, every reference) before the first write, so a
/// bad document is a 400 that changes nothing.
public struct FixtureLoader: Sendable {
    let domain: TouchSyncDomain
    let hashes: PasswordHashCache

    /// Most objects of one kind in one document.
    public static let maxObjectsPerKind = TestModeLimits.maxFixtureObjectsPerKind

    public init(domain: TouchSyncDomain, hashes: PasswordHashCache) {
        self.domain = domain
        self.hashes = hashes
    }

    // MARK: parsed document

    /// `password` is either a plain password (hashed here) or, from `touchsync export`, a stored hash.
    struct UserSpec { let ref, username: String; let password: Secret; let firstName, avatarUrl: String? }
    enum Secret: Hashable { case plain(String), hash(String) }
    struct DeviceSpec { let user: String; let token: String; let platform: String }
    struct RoomSpec { let ref: String; let name: String?; let createdBy: String; let members: [String] }
    struct ElementSpec { let ref: String?; let room: String; let createdBy: String; let body: JSONObject }
    struct PairSpec { let target: String; let user: String }
    struct MessageSpec { let ref: String?; let room: String; let user: String; let text: String }
    struct PostSpec { let ref: String?; let author: String; let content: String; let imageUrl: String? }

    struct Document {
        var users: [UserSpec] = []
        var rooms: [RoomSpec] = []
        var elements: [ElementSpec] = []
        var reactions: [PairSpec] = []
        var messages: [MessageSpec] = []
        var posts: [PostSpec] = []
        var likes: [PairSpec] = []
        var saves: [PairSpec] = []
        var devices: [DeviceSpec] = []
    }

    static let kinds = TestModeLimits.fixtureKinds
    static let elementFields: Set<String> = ["type", "positionX", "positionY", "width", "height", "content", "imageUrl", "audioUrl",
                                             "videoUrl", "thumbnailUrl", "duration"]

    /// The result: ids (and users' tokens) by ref.
    public struct Result: Sendable {
        public var users = JSONObject()
        public var rooms = JSONObject()
        public var elements = JSONObject()
        public var messages = JSONObject()
        public var posts = JSONObject()
        public var counts = JSONObject()
    }

    public func load(_ value: JSONValue) async throws -> Result {
        let doc = try Self.parse(value)
        var result = Result()

        // Users: hash all passwords first (concurrently, cached by password), then insert.
        let passwords = Array(Set(doc.users.compactMap { u -> String? in if case .plain(let p) = u.password { return p } else { return nil } }))
        var hashed: [String: String] = [:]
        try await withThrowingTaskGroup(of: (String, String).self) { group in
            for p in passwords { group.addTask { (p, await hashes.hash(p, with: domain.auth)) } }
            for try await (p, h) in group { hashed[p] = h }
        }
        var userIds: [String: String] = [:]
        for u in doc.users {
            let hash: String
            switch u.password {
            case .plain(let p): hash = hashed[p]!
            case .hash(let h): hash = h
            }
            let user = try await domain.auth.createUser(username: u.username, passwordHash: hash, firstName: u.firstName,
                                                        avatarUrl: u.avatarUrl)
            userIds[u.ref] = user.id
            result.users[u.ref] = .object(["id": .string(user.id), "username": .string(user.username),
                                           "token": .string(await domain.auth.issueToken(userId: user.id))])
        }

        var roomIds: [String: String] = [:]
        for r in doc.rooms {
            var input: JSONObject = ["memberIds": .array(r.members.map { .string(userIds[$0]!) })]
            if let name = r.name { input["name"] = .string(name) }
            let room = try await domain.rooms.create(actor: userIds[r.createdBy]!, input: Input(input))
            roomIds[r.ref] = room.id
            result.rooms[r.ref] = .string(room.id)
        }

        var elements: [String: (id: String, room: String)] = [:]
        for e in doc.elements {
            let roomId = roomIds[e.room]!
            let created = try await domain.elements.create(roomId: roomId, actor: userIds[e.createdBy]!, input: Input(e.body), originSocketId: nil)
            if let r = e.ref {
                elements[r] = (created.id, roomId)
                result.elements[r] = .string(created.id)
            }
        }

        for r in doc.reactions {
            let e = elements[r.target]!
            _ = try await domain.reactions.toggle(roomId: e.room, elementId: e.id, actor: userIds[r.user]!, originSocketId: nil)
        }

        for m in doc.messages {
            let message = try await domain.messages.send(roomId: roomIds[m.room]!, actor: userIds[m.user]!, input: Input(["text": .string(m.text)]),
                                                         originSocketId: nil)
            if let r = m.ref { result.messages[r] = .string(message.id) }
        }

        var postIds: [String: String] = [:]
        for p in doc.posts {
            let post = try await domain.posts.create(actor: userIds[p.author]!, input: Input(["content": .string(p.content), "imageUrl": .optional(p.imageUrl)]))
            if let r = p.ref {
                postIds[r] = post.id
                result.posts[r] = .string(post.id)
            }
        }
        for l in doc.likes { _ = try await domain.posts.set(.like, on: true, postId: postIds[l.target]!, actor: userIds[l.user]!) }
        for s in doc.saves { _ = try await domain.posts.set(.save, on: true, postId: postIds[s.target]!, actor: userIds[s.user]!) }
        for d in doc.devices {
            _ = try await domain.devices.register(actor: userIds[d.user]!, input: Input(["token": .string(d.token), "platform": .string(d.platform)]))
        }

        result.counts = [
            "users": .int(Int64(doc.users.count)), "rooms": .int(Int64(doc.rooms.count)), "elements": .int(Int64(doc.elements.count)),
            "reactions": .int(Int64(doc.reactions.count)), "messages": .int(Int64(doc.messages.count)), "posts": .int(Int64(doc.posts.count)),
            "likes": .int(Int64(doc.likes.count)), "saves": .int(Int64(doc.saves.count)), "devices": .int(Int64(doc.devices.count)),
        ]
        return result
    }

    // MARK: parsing and reference checks (no writes)

    static func parse(_ value: JSONValue) throws -> Document {
        guard let root = value.objectValue else { throw DomainError.validation(field: "body", message: "must be a JSON object") }
        for key in root.keys where !kinds.contains(key) && !key.hasPrefix("_") && !key.hasPrefix("$") {
            throw DomainError.validation(field: key, message: "unknown fixture kind (expected one of \(kinds.joined(separator: ", ")))")
        }
        func list(_ kind: String) throws -> [(String, Input)] {
            guard let v = root[kind], !v.isNull else { return [] }
            guard let items = v.arrayValue else { throw DomainError.validation(field: kind, message: "must be an array") }
            guard items.count <= maxObjectsPerKind else { throw DomainError.validation(field: kind, message: "must have at most \(maxObjectsPerKind) entries") }
            return try items.enumerated().map { i, item in
                let path = "\(kind)[\(i)]"
                guard let o = item.objectValue else { throw DomainError.validation(field: path, message: "must be an object") }
                return (path, Input(o))
            }
        }
        func field<T>(_ path: String, _ body: () throws -> T) throws -> T {
            do { return try body() } catch let error as DomainError {
                if case .validation(let f, let m) = error { throw DomainError.validation(field: "\(path).\(f)", message: m) }
                throw error
            }
        }
        func optionalRef(_ path: String, _ input: Input, _ seen: inout Set<String>) throws -> String? {
            guard input.has("ref"), input.object["ref"]?.isNull == false else { return nil }
            let ref = try field(path) { try input.string("ref", maxLength: 200) }
            guard seen.insert(ref).inserted else { throw DomainError.validation(field: "\(path).ref", message: "duplicate ref \"\(ref)\"") }
            return ref
        }
        func reference(_ path: String, _ input: Input, _ key: String, in known: Set<String>, kind: String) throws -> String {
            let ref = try field(path) { try input.string(key, maxLength: 200) }
            guard known.contains(ref) else {
                throw DomainError.validation(field: "\(path).\(key)", message: "no \(kind) with ref \"\(ref)\" in this document")
            }
            return ref
        }

        var doc = Document()
        var userRefs: Set<String> = []
        var usernames: Set<String> = []
        for (path, u) in try list("users") {
            let username = try field(path) { try u.string("username", maxLength: 32) }
            try field(path) { try Self.validateUsername(username) }
            guard usernames.insert(username).inserted else { throw DomainError.validation(field: "\(path).username", message: "duplicate username \(username)") }
            let explicitRef = try optionalRef(path, u, &userRefs)
            let ref = explicitRef ?? username
            if explicitRef == nil, !userRefs.insert(ref).inserted {
                throw DomainError.validation(field: "\(path).ref", message: "duplicate ref \"\(ref)\"")
            }
            let password: Secret
            if u.has("passwordHash") && !u.has("password") {
                let hash = try field(path) { try u.string("passwordHash", maxLength: 1024) }
                guard !hash.isEmpty else { throw DomainError.validation(field: "\(path).passwordHash", message: "must not be empty") }
                password = .hash(hash)
            } else {
                let plain = try field(path) { try u.string("password", maxLength: 1024) }
                guard plain.count >= 8 else { throw DomainError.validation(field: "\(path).password", message: "must be at least 8 characters") }
                password = .plain(plain)
            }
            doc.users.append(UserSpec(ref: ref, username: username, password: password,
                                      firstName: try field(path) { try u.optionalString("firstName", maxLength: 100) },
                                      avatarUrl: try field(path) { try u.optionalString("avatarUrl", maxLength: 2048) }))
        }

        var roomRefs: Set<String> = []
        for (path, r) in try list("rooms") {
            guard let ref = try optionalRef(path, r, &roomRefs) else { throw DomainError.validation(field: "\(path).ref", message: "is required") }
            let createdBy = try reference(path, r, "createdBy", in: userRefs, kind: "user")
            var members: [String] = []
            let memberRefs: [String] = try field(path) { try r.optionalStringArray("members") } ?? []
            for (j, m) in memberRefs.enumerated() {
                guard userRefs.contains(m) else { throw DomainError.validation(field: "\(path).members[\(j)]", message: "no user with ref \"\(m)\" in this document") }
                members.append(m)
            }
            let name = try field(path) { try r.optionalString("name", maxLength: 200) }
            doc.rooms.append(RoomSpec(ref: ref, name: name, createdBy: createdBy, members: members))
        }

        var elementRefs: Set<String> = []
        for (path, e) in try list("elements") {
            let ref = try optionalRef(path, e, &elementRefs)
            let room = try reference(path, e, "room", in: roomRefs, kind: "room")
            let createdBy = try reference(path, e, "createdBy", in: userRefs, kind: "user")
            var body: JSONObject = ["positionX": 0, "positionY": 0, "width": 150, "height": 150]
            for (k, v) in e.object where !["ref", "room", "createdBy"].contains(k) {
                guard elementFields.contains(k) else { throw DomainError.validation(field: "\(path).\(k)", message: "is not an element field") }
                body[k] = v
            }
            guard body["type"] != nil else { throw DomainError.validation(field: "\(path).type", message: "is required") }
            guard let spec = doc.rooms.first(where: { $0.ref == room }), spec.createdBy == createdBy || spec.members.contains(createdBy) else {
                throw DomainError.validation(field: "\(path).createdBy", message: "is not a member of room \"\(room)\"")
            }
            doc.elements.append(ElementSpec(ref: ref, room: room, createdBy: createdBy, body: body))
        }

        func isMember(_ user: String, _ room: String) -> Bool {
            doc.rooms.first { $0.ref == room }.map { $0.createdBy == user || $0.members.contains(user) } ?? false
        }

        var reactionPairs: Set<String> = []
        for (path, r) in try list("reactions") {
            let element = try reference(path, r, "element", in: elementRefs, kind: "element")
            let user = try reference(path, r, "user", in: userRefs, kind: "user")
            guard reactionPairs.insert(element + "\u{0}" + user).inserted else {
                throw DomainError.validation(field: path, message: "duplicate reaction of \"\(user)\" on \"\(element)\"")
            }
            let room = doc.elements.first { $0.ref == element }!.room
            guard isMember(user, room) else { throw DomainError.validation(field: "\(path).user", message: "is not a member of room \"\(room)\"") }
            doc.reactions.append(PairSpec(target: element, user: user))
        }

        var messageRefs: Set<String> = []
        for (path, m) in try list("messages") {
            let ref = try optionalRef(path, m, &messageRefs)
            let room = try reference(path, m, "room", in: roomRefs, kind: "room")
            let user = try reference(path, m, "user", in: userRefs, kind: "user")
            guard isMember(user, room) else { throw DomainError.validation(field: "\(path).user", message: "is not a member of room \"\(room)\"") }
            doc.messages.append(MessageSpec(ref: ref, room: room, user: user, text: try field(path) { try m.string("text", maxLength: 10_000) }))
        }

        var postRefs: Set<String> = []
        for (path, p) in try list("posts") {
            let ref = try optionalRef(path, p, &postRefs)
            let author = try reference(path, p, "author", in: userRefs, kind: "user")
            doc.posts.append(PostSpec(ref: ref, author: author, content: try field(path) { try p.string("content", maxLength: 10_000) },
                                      imageUrl: try field(path) { try p.optionalString("imageUrl", maxLength: 4096) }))
        }
        for kind in ["likes", "saves"] {
            for (path, l) in try list(kind) {
                let pair = PairSpec(target: try reference(path, l, "post", in: postRefs, kind: "post"),
                                    user: try reference(path, l, "user", in: userRefs, kind: "user"))
                if kind == "likes" { doc.likes.append(pair) } else { doc.saves.append(pair) }
            }
        }
        var tokens: Set<String> = []
        for (path, d) in try list("devices") {
            let user = try reference(path, d, "user", in: userRefs, kind: "user")
            let token = try field(path) { try d.string("token", maxLength: 512) }
            guard tokens.insert(token).inserted else { throw DomainError.validation(field: "\(path).token", message: "duplicate device token") }
            let platform = try field(path) { try d.string("platform", maxLength: 16) }
            guard platform == "ios" || platform == "android" else { throw DomainError.validation(field: "\(path).platform", message: "must be ios or android") }
            doc.devices.append(DeviceSpec(user: user, token: token, platform: platform))
        }
        return doc
    }

    /// 3–32 characters of `[a-z0-9_.]`, as registration requires (`AuthService.validateUsername`).
    static func validateUsername(_ name: String) throws(DomainError) {
        guard (3...32).contains(name.utf8.count),
              name.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F || $0 == 0x2E }) else {
            throw DomainError.validation(field: "username", message: "must be 3-32 characters of a-z, 0-9, _ and .")
        }
    }
}
