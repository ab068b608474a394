import TSJSON

/// A heart on an element (docs/api.md, "Reaction").
public struct Reaction: Sendable, Equatable {
    public let id: String
    public let elementId: String
    public let userId: String
    public let createdAt: Int64
    public let user: PublicUser

    /// The shape is written once, in `writeJSON(into:)` (Reaction+JSONShape.swift).
    public var json: JSONValue { JSONTreeWriter.build { writeJSON(into: &$0) } }
}

/// Reaction totals of one element for one viewer (docs/api.md, "ElementStats"): `count` and
/// `totalReactions` are both sent so that either client model decodes.
public struct ElementStats: Sendable, Equatable {
    public var totalReactions: Int64
    public var hasReacted: Bool
    public var topReactors: [PublicUser]

    /// The shape is written once, in `writeJSON(into:)` (Reaction+JSONShape.swift).
    public var json: JSONValue { JSONTreeWriter.build { writeJSON(into: &$0) } }

    public func viewed(hasReacted: Bool) -> ElementStats {
        var copy = self
        copy.hasReacted = hasReacted
        return copy
    }
}

/// What a toggle did.
public struct ToggleResult: Sendable, Equatable {
    public enum Action: String, Sendable { case added, removed }
    public let action: Action
    public let roomId: String
    public let reaction: Reaction
    public let stats: ElementStats
    /// The element's author, who is notified of an added reaction.
    public let elementOwner: String

    /// The shape is written once, in `writeJSON(into:)` (Reaction+JSONShape.swift).
    public var json: JSONValue { JSONTreeWriter.build { writeJSON(into: &$0) } }
}
