import TSJSON

/// A user as other users see them (docs/api.md, "User").
public struct PublicUser: Sendable, Hashable {
    public let id: String
    public let username: String
    public let firstName: String?
    public let avatarUrl: String?

    public init(id: String, username: String, firstName: String?, avatarUrl: String?) {
        self.id = id
        self.username = username
        self.firstName = firstName
        self.avatarUrl = avatarUrl
    }

    /// The shape is written once, in `writeJSON(into:)` (Room+JSONShape.swift).
    public var json: JSONValue { JSONTreeWriter.build { writeJSON(into: &$0) } }
}
