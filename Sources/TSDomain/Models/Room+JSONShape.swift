import TSJSON

// The one description of each response shape this file covers (CONTRACT.md §1 "Room", "User
// (public)"; seed 002 `PostInteractionState`, `InteractionStateData`): member names, order and
// formats are written here only. `JSONBytesWriter` turns them into response bytes on the read
// paths (my-rooms, interaction-state); `JSONTreeWriter` into the `JSONValue`s (`.json`) that other
// paths still compose. Tests/TSAppTests/ReadPathBytesTests decodes the bytes with the Codable
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

extension PublicUser {
    public func writeJSON<S: JSONObjectSink>(into s: inout S) {
        s.string("id", id)
        s.string("username", username)
        s.optionalString("firstName", firstName)
        s.optionalString("avatarUrl", avatarUrl)
    }
}

extension Room {
    public func writeJSON<S: JSONObjectSink>(into s: inout S) {
        s.string("id", id)
        s.string("name", name)
        s.string("createdBy", createdBy)
        s.timestamp("createdAt", createdAt)
        s.timestamp("updatedAt", updatedAt)
        s.bool("isActive", isActive)
        s.optionalString("nameSetBy", nameSetBy)
        if let user = nameSetByUser { s.object("nameSetByUser") { user.writeJSON(into: &$0) } } else { s.null("nameSetByUser") }
        s.int("elementCount", elementCount)
        s.object("badges") {
            $0.int("messages", unreadMessages)
            $0.int("elements", unseenElements)
        }
        s.bool("hasUnread", hasUnread)
    }
}

extension PostInteractionState {
    public func writeJSON<S: JSONObjectSink>(into s: inout S) {
        s.string("postId", postId)
        s.bool("isLiked", isLiked)
        s.bool("isSaved", isSaved)
        s.int("likeCount", likeCount)
        s.int("saveCount", saveCount)
    }
}

extension PostService.InteractionStates {
    /// `InteractionStateData`: the states in request order and their totals.
    public func writeJSON<S: JSONObjectSink>(into s: inout S) {
        s.objects("interactions", interactions) { $1.writeJSON(into: &$0) }
        s.int("totalPosts", Int64(interactions.count))
        s.int("totalLiked", Int64(interactions.lazy.filter(\.isLiked).count))
        s.int("totalSaved", Int64(interactions.lazy.filter(\.isSaved).count))
    }
}
