// RFC 6455 §7.4 (status codes) and §7.4.2 (reserved ranges).

/// Close status codes used by this implementation, and the validity rules for codes received
/// in a Close frame.
public enum WebSocketCloseCode {
    public static let normalClosure: UInt16 = 1000
    public static let goingAway: UInt16 = 1001
    public static let protocolError: UInt16 = 1002
    public static let unsupportedData: UInt16 = 1003
    /// 1005: "no status code was actually present" — never sent on the wire (§7.4.1).
    public static let noStatusReceived: UInt16 = 1005
    /// 1006: "closed abnormally" — never sent on the wire (§7.4.1).
    public static let abnormalClosure: UInt16 = 1006
    public static let invalidPayloadData: UInt16 = 1007
    public static let policyViolation: UInt16 = 1008
    public static let messageTooBig: UInt16 = 1009
    public static let mandatoryExtension: UInt16 = 1010
    public static let internalError: UInt16 = 1011

    /// Whether a peer may legitimately send `code` in a Close frame (§7.4.1, §7.4.2, and the
    /// IANA registry of §11.7 which added 1012–1014): 1000–1003, 1007–1014 and 3000–4999.
    /// 0–999 are unused, 1004/1005/1006/1015 are reserved or must not be sent, 1016–2999 are
    /// reserved for future protocol use, 5000+ is out of range.
    public static func isValidReceived(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }
}
