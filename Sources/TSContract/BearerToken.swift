/// The token of an `Authorization: Bearer <token>` header (RFC 6750 section 2.1), read the same way
/// for REST requests and Socket.IO handshakes (which also accept it from the CONNECT auth or `?token=`).
public enum BearerToken {
    /// The token of `Authorization: Bearer <token>`, if any.
    public static func parse(_ header: String?) -> String? {
        guard var h = header else { return nil }
        // All ASCII (every real header): the same answer read from the bytes, with one `String` (the token).
        if let ascii = h.withUTF8({ parseASCII($0) }) { return ascii }
        let parts = h.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: " ")
        return token.isEmpty ? nil : token
    }

    /// `parse` of an all-ASCII header, where characters are bytes: the first space-separated
    /// word must be `bearer` in any case, the token is the rest without its surrounding spaces.
    /// Nil when the header is not all ASCII (the caller then splits it by characters); `.some(nil)`
    /// when it holds no bearer token.
    static func parseASCII(_ b: UnsafeBufferPointer<UInt8>) -> String?? {
        var i = 0
        for byte in b where byte >= 0x80 { return nil }
        while i < b.count, b[i] == 0x20 { i += 1 }
        let word = i
        while i < b.count, b[i] != 0x20 { i += 1 }
        guard i - word == 6, i < b.count else { return .some(nil) }
        for (k, letter) in "bearer".utf8.enumerated() where b[word + k] | 0x20 != letter { return .some(nil) }
        var start = i + 1, end = b.count
        while start < end, b[start] == 0x20 { start += 1 }
        while end > start, b[end - 1] == 0x20 { end -= 1 }
        guard start < end else { return .some(nil) }
        return String(decoding: UnsafeBufferPointer(rebasing: b[start..<end]), as: UTF8.self)
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var s = self
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return String(s)
    }
}
