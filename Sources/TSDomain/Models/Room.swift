import TSJSON

/// A room as the caller sees it: badges are the caller's (docs/api.md, "Room").
public struct Room: Sendable, Equatable {
    public let id: String
    public var name: String
    public let createdBy: String
    public let createdAt: Int64
    public var updatedAt: Int64
    public var isActive: Bool
    public var nameSetBy: String?
    public var nameSetByUser: PublicUser?
    public var elementCount: Int64
    public var unseenElements: Int64
    public var unreadMessages: Int64

    // `hasUnread` (either badge > 0) comes with `RoomFields` (Room+JSONShape.swift).

    /// The shape is written once, in `writeJSON(into:)` (Room+JSONShape.swift).
    public var jsonObject: JSONObject {
        var w = JSONTreeWriter()
        writeJSON(into: &w)
        return w.object
    }

    public var json: JSONValue { .object(jsonObject) }
}
