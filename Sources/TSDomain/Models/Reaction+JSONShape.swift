import TSJSON

// The toggle's answer (docs/api.md: "Reaction", "ElementStats", "ToggleResult") as a shape that
// `JSONBytesWriter` turns into the REST toggle's response bytes (no `JSONValue` tree serialized per
// toggle). The realtime payloads keep the literal trees of `.json` (Reaction.swift), cheaper to
// build than `JSONTreeWriter`'s; Tests/TSDomainTests/ReactionShapeTests checks that both write the
// same members in the same order, and Tests/TSAppTests/ToggleBytesTests the answer's bytes over a
// socket.

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
