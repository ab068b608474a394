import Foundation

/// A fixture document built in Swift: users, rooms with members, elements, reactions, messages,
/// posts, likes and saves, which `TouchSyncBackend.load(_:)` creates in one request
/// (`POST /api/test/fixtures`, docs/test-mode.md). Objects refer to each other by name (their
/// `ref`); each call returns a new document, so a shared base can be extended per test:
///
/// ```swift
/// let world = Fixtures()
///     .user("alice").user("bob")
///     .room("Design Team", createdBy: "alice", members: ["bob"])
///     .element("kickoff", in: "Design Team", by: "alice", type: .note, content: "Kick-off")
///     .reaction(on: "kickoff", by: "bob")
///     .post("launch", by: "alice", content: "We launched")
///     .like("launch", by: "bob")
/// ```
///
/// The server checks the whole document before writing anything: a reference to a name that is
/// not in the document, or an author who is not a member, is a 400 naming the field.
public struct Fixtures: Sendable {
    /// The password of users added without one (at least 8 characters, as registration requires).
    public static let defaultPassword = "password123"

    private(set) var users: [[String: TouchSyncJSON]] = []
    private(set) var rooms: [[String: TouchSyncJSON]] = []
    private(set) var elements: [[String: TouchSyncJSON]] = []
    private(set) var reactions: [[String: TouchSyncJSON]] = []
    private(set) var messages: [[String: TouchSyncJSON]] = []
    private(set) var posts: [[String: TouchSyncJSON]] = []
    private(set) var likes: [[String: TouchSyncJSON]] = []
    private(set) var saves: [[String: TouchSyncJSON]] = []
    private(set) var devices: [[String: TouchSyncJSON]] = []

    /// An empty document.
    public init() {}

    /// A user named `username` (3-32 of a-z, 0-9, `_`, `.`), whose ref is the username; they can
    /// also log in with `password`.
    public func user(_ username: String, password: String = Fixtures.defaultPassword, firstName: String? = nil,
                     avatarUrl: String? = nil) -> Fixtures {
        var u: [String: TouchSyncJSON] = ["username": .string(username), "password": .string(password)]
        if let firstName { u["firstName"] = .string(firstName) }
        if let avatarUrl { u["avatarUrl"] = .string(avatarUrl) }
        return adding(\.users, u)
    }

    /// A room called `name` (also its ref), created by the user `createdBy` (a member), with
    /// `members` added. `name: nil` keeps the server's default date-time name; then `ref` names it.
    public func room(_ ref: String, name: String? = nil, createdBy: String, members: [String] = []) -> Fixtures {
        adding(\.rooms, ["ref": .string(ref), "name": .string(name ?? ref), "createdBy": .string(createdBy),
                         "members": .array(members.map { .string($0) })])
    }

    /// A room that keeps the server's default name (its creation date and time, `nameSetBy` null).
    public func unnamedRoom(_ ref: String, createdBy: String, members: [String] = []) -> Fixtures {
        adding(\.rooms, ["ref": .string(ref), "createdBy": .string(createdBy), "members": .array(members.map { .string($0) })])
    }

    /// An element in room `room`, created by `by` (a member). Position defaults to 0,0 and size to 150×150.
    public func element(_ ref: String, in room: String, by user: String, type: ElementType = .note, content: String? = nil,
                        positionX: Double? = nil, positionY: Double? = nil, width: Double? = nil, height: Double? = nil,
                        imageUrl: String? = nil, audioUrl: String? = nil, videoUrl: String? = nil, thumbnailUrl: String? = nil,
                        duration: Double? = nil) -> Fixtures {
        var e: [String: TouchSyncJSON] = ["ref": .string(ref), "room": .string(room), "createdBy": .string(user), "type": .string(type.rawValue)]
        let numbers: [(String, Double?)] = [("positionX", positionX), ("positionY", positionY), ("width", width), ("height", height), ("duration", duration)]
        for case let (key, value?) in numbers { e[key] = .number(value) }
        let strings: [(String, String?)] = [("content", content), ("imageUrl", imageUrl), ("audioUrl", audioUrl), ("videoUrl", videoUrl),
                                            ("thumbnailUrl", thumbnailUrl)]
        for case let (key, value?) in strings { e[key] = .string(value) }
        return adding(\.elements, e)
    }

    /// A heart by `user` (a member of the element's room) on the element `element`.
    public func reaction(on element: String, by user: String) -> Fixtures {
        adding(\.reactions, ["element": .string(element), "user": .string(user)])
    }

    /// A message by `user` (a member) in `room`.
    public func message(_ ref: String, in room: String, by user: String, text: String) -> Fixtures {
        adding(\.messages, ["ref": .string(ref), "room": .string(room), "user": .string(user), "text": .string(text)])
    }

    /// A post by `author`.
    public func post(_ ref: String, by author: String, content: String, imageUrl: String? = nil) -> Fixtures {
        var p: [String: TouchSyncJSON] = ["ref": .string(ref), "author": .string(author), "content": .string(content)]
        if let imageUrl { p["imageUrl"] = .string(imageUrl) }
        return adding(\.posts, p)
    }

    /// `user` likes the post `post`.
    public func like(_ post: String, by user: String) -> Fixtures {
        adding(\.likes, ["post": .string(post), "user": .string(user)])
    }

    /// `user` saves the post `post`.
    public func save(_ post: String, by user: String) -> Fixtures {
        adding(\.saves, ["post": .string(post), "user": .string(user)])
    }

    /// A push token of `user` (`platform`: `ios` or `android`).
    public func device(_ token: String, of user: String, platform: String = "ios") -> Fixtures {
        adding(\.devices, ["user": .string(user), "token": .string(token), "platform": .string(platform)])
    }

    /// A new document: this one with `object` appended to the list at `list` (every builder above
    /// is one of these, so a shared base is never changed by a test that extends it).
    private func adding(_ list: WritableKeyPath<Fixtures, [[String: TouchSyncJSON]]>, _ object: [String: TouchSyncJSON]) -> Fixtures {
        var copy = self
        copy[keyPath: list].append(object)
        return copy
    }

    /// The JSON document `POST /api/test/fixtures` takes.
    public var json: TouchSyncJSON {
        let lists: [(String, [[String: TouchSyncJSON]])] = [("users", users), ("rooms", rooms), ("elements", elements),
                                                            ("reactions", reactions), ("messages", messages), ("posts", posts),
                                                            ("likes", likes), ("saves", saves), ("devices", devices)]
        var doc: [String: TouchSyncJSON] = [:]
        for (key, list) in lists where !list.isEmpty { doc[key] = .array(list.map { .object($0) }) }
        return .object(doc)
    }
}

/// What `TouchSyncBackend.load(_:)` created: each user's token and every object's id, by the
/// name (ref) the fixtures gave it.
public struct LoadedFixtures: Sendable, Hashable {
    /// The server's answer as it came.
    public let result: FixtureResult

    /// An object created from fixtures: its ref and its server id.
    public struct Loaded: Sendable, Hashable {
        public let ref: String
        public let id: String
    }

    /// The user with ref (username) `ref`. Stops the test with a message naming the known refs
    /// when there is none: a typo in a test, not a server answer.
    public func user(_ ref: String) -> LoadedUser {
        guard let u = result.users[ref] else { preconditionFailure(Self.unknown("user", ref, result.users.keys)) }
        return u
    }

    /// The room with ref `ref` (its name, for rooms added with `room(_:createdBy:)`).
    public func room(_ ref: String) -> Loaded { lookup("room", ref, result.rooms) }
    /// The element with ref `ref`.
    public func element(_ ref: String) -> Loaded { lookup("element", ref, result.elements) }
    /// The message with ref `ref`.
    public func message(_ ref: String) -> Loaded { lookup("message", ref, result.messages) }
    /// The post with ref `ref`.
    public func post(_ ref: String) -> Loaded { lookup("post", ref, result.posts) }

    /// Events after this sequence number happened after the load.
    public var lastEventSequence: Int64 { result.lastEventSequence }

    private func lookup(_ kind: String, _ ref: String, _ ids: [String: String]) -> Loaded {
        guard let id = ids[ref] else { preconditionFailure(Self.unknown(kind, ref, ids.keys)) }
        return Loaded(ref: ref, id: id)
    }

    private static func unknown(_ kind: String, _ ref: String, _ known: Dictionary<String, some Any>.Keys) -> String {
        "no \(kind) named \"\(ref)\" in the loaded fixtures (known: \(known.sorted().joined(separator: ", ")))"
    }
}
