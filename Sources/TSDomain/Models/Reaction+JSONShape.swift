import TSJSON

// The one description of the toggle's answer (docs/api.md: "Reaction", "ElementStats",
// "ToggleResult"): member names, order and formats are written here only. `JSONBytesWriter` turns
// them into the REST toggle's response bytes (no `JSONValue` tree per toggle); `JSONTreeWriter`
// into the `.json` trees the realtime payloads and the other paths compose.
// Tests/TSAppTests/ToggleBytesTests compares the bytes with the tree the routes built before.

extension Reaction {
    public func writeJSON<S: JSONObjectSink>(into s: inout S) {
        s.string("id", id)
        s.string("elementId", elementId)
        s.string("userId", userId)
        s.string("type", "heart")
        s.timestamp("createdAt", createdAt)
        s.object("user") { user.writeJSON(into: &$0) }
    }
}

extension ElementStats {
    public func writeJSON<S: JSONObjectSink>(into s: inout S) {
        s.int("totalReactions", totalReactions)
        s.int("count", totalReactions)
        s.bool("hasReacted", hasReacted)
        if hasReacted { s.string("userReaction", "heart") } else { s.null("userReaction") }
        s.objects("topReactors", topReactors) { $1.writeJSON(into: &$0) }
    }
}

extension ToggleResult {
    public func writeJSON<S: JSONObjectSink>(into s: inout S) {
        s.string("action", action.rawValue)
        s.object("reaction") { reaction.writeJSON(into: &$0) }
        s.object("elementStats") { stats.writeJSON(into: &$0) }
    }

    /// `writeJSON` into response bytes, specialised here: called from another module, the generic
    /// form runs unspecialised (a witness call and a metadata lookup per member).
    public func writeJSON(bytes w: inout JSONBytesWriter) { writeJSON(into: &w) }
}
