import TSJSON

// The one description of each response shape this file covers (docs/api.md: "Room", "User",
// "PostInteractionState", "InteractionStates"): member names, order and
// formats are written here only, over the fields a `Room` or a row view has (`RoomFields`,
// `PublicUserFields`: text as a `String` or as a column's bytes). `JSONBytesWriter` turns them
// into response bytes on the read paths (my-rooms, interaction-state); `JSONTreeWriter` into the
// `JSONValue`s (`.json`) that other paths still compose. Tests/TSAppTests/ReadPathBytesTests decodes the bytes with the Codable
// contract models and compares them with the tree.

extension JSONObjectSink {
    /// A contract date: ISO 8601 UTC with second precision, written in place (no String).
    mutating func timestamp(_ key: StaticString, _ seconds: Int64) {
        let t = Timestamp.civil(seconds)
        if (0...9999).contains(t.year) {
            asciiString(key, capacity: 20) { Timestamp.write20(t, into: $0) }
        } else {
            string(key, Timestamp.iso8601(seconds))
        }
    }
}

/// The fields of a public user that its shape writes: a `PublicUser`, or a view of a result row
/// whose text is escaped straight from the column (`Readers.PublicUserRow`, no `String`).
public protocol PublicUserFields {
    associatedtype Text: JSONText
    var id: Text { get }
    var username: Text { get }
    var firstName: Text? { get }
    var avatarUrl: Text? { get }
}

extension PublicUser: PublicUserFields {}

extension PublicUserFields {
    public func writeJSON<S: JSONObjectSink>(into s: inout S) {
        s.text("id", id)
        s.text("username", username)
        s.optionalText("firstName", firstName)
        s.optionalText("avatarUrl", avatarUrl)
    }
}

/// The fields of a room that its shape writes: a `Room`, or a view of a result row
/// (`Readers.RoomRow`, my-rooms' bytes path).
public protocol RoomFields {
    associatedtype Text: JSONText
    associatedtype User: PublicUserFields
    var id: Text { get }
    var name: Text { get }
    var createdBy: Text { get }
    var createdAt: Int64 { get }
    var updatedAt: Int64 { get }
    var isActive: Bool { get }
    var nameSetBy: Text? { get }
    var nameSetByUser: User? { get }
    var elementCount: Int64 { get }
    var unseenElements: Int64 { get }
    var unreadMessages: Int64 { get }
}

extension Room: RoomFields {}

extension RoomFields {
    public var hasUnread: Bool { unseenElements > 0 || unreadMessages > 0 }

    public func writeJSON<S: JSONObjectSink>(into s: inout S) {
        s.text("id", id)
        s.text("name", name)
        s.text("createdBy", createdBy)
        s.timestamp("createdAt", createdAt)
        s.timestamp("updatedAt", updatedAt)
        s.bool("isActive", isActive)
        s.optionalText("nameSetBy", nameSetBy)
        if let user = nameSetByUser { s.object("nameSetByUser") { user.writeJSON(into: &$0) } } else { s.null("nameSetByUser") }
        s.int("elementCount", elementCount)
        s.object("badges") {
            $0.int("messages", unreadMessages)
            $0.int("elements", unseenElements)
        }
        s.bool("hasUnread", hasUnread)
    }
}

/// The fields of one post's interaction state that its shape writes: a `PostInteractionState`, or
/// interaction-state's bytes path's view, whose id is the request's own bytes
/// (`PostService.StateView`, no `String`).
public protocol PostInteractionStateFields {
    associatedtype Text: JSONText
    var postId: Text { get }
    var isLiked: Bool { get }
    var isSaved: Bool { get }
    var likeCount: Int64 { get }
    var saveCount: Int64 { get }
}

extension PostInteractionState: PostInteractionStateFields {}

extension PostInteractionStateFields {
    public func writeJSON<S: JSONObjectSink>(into s: inout S) {
        s.text("postId", postId)
        s.bool("isLiked", isLiked)
        s.bool("isSaved", isSaved)
        s.int("likeCount", likeCount)
        s.int("saveCount", saveCount)
    }
}

extension PostService.InteractionStates {
    /// `InteractionStateData`: the states in request order and their totals.
    public func writeJSON<S: JSONObjectSink>(into s: inout S) { Self.writeJSON(interactions, into: &s) }

    /// `InteractionStateData` of any states' fields, in their order.
    static func writeJSON<C: Collection, S: JSONObjectSink>(_ states: C, into s: inout S) where C.Element: PostInteractionStateFields {
        s.objects("interactions", states) { $1.writeJSON(into: &$0) }
        s.int("totalPosts", Int64(states.count))
        s.int("totalLiked", Int64(states.lazy.filter(\.isLiked).count))
        s.int("totalSaved", Int64(states.lazy.filter(\.isSaved).count))
    }
}
