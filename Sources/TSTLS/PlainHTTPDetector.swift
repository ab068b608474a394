/// Recognises a plain-HTTP request from its first bytes (RFC 9112 §3: method SP request-target)
/// before they reach libssl. A TLS connection starts with a handshake record (RFC 8446 §5.1:
/// content type 22 = 0x16), never an ASCII letter, so an upper-case token followed by a space —
/// or a first read of upper-case letters only — is an http:// request sent to the https:// port.
public enum PlainHTTPDetector {
    /// The method token when `bytes` (the first bytes of the connection) look like HTTP.
    public static func method(in bytes: UnsafeRawBufferPointer) -> String? {
        guard let first = bytes.first, first >= UInt8(ascii: "A"), first <= UInt8(ascii: "Z") else { return nil }
        var token: [UInt8] = []
        for b in bytes.prefix(16) {
            if b == UInt8(ascii: " ") { break }
            guard b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z") else { return nil }
            token.append(b)
        }
        return String(decoding: token, as: UTF8.self)
    }
}
