/// An HTTP request method (RFC 9110 §9). Any token is representable; the common ones are constants.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public static let GET = HTTPMethod(rawValue: "GET")
    public static let HEAD = HTTPMethod(rawValue: "HEAD")
    public static let POST = HTTPMethod(rawValue: "POST")
    public static let PUT = HTTPMethod(rawValue: "PUT")
    public static let PATCH = HTTPMethod(rawValue: "PATCH")
    public static let DELETE = HTTPMethod(rawValue: "DELETE")
    public static let OPTIONS = HTTPMethod(rawValue: "OPTIONS")
    public static let CONNECT = HTTPMethod(rawValue: "CONNECT")
    public static let TRACE = HTTPMethod(rawValue: "TRACE")

    public var description: String { rawValue }

    /// Interns the common methods so parsing does not allocate for them.
    static func fromBytes(_ bytes: UnsafeRawBufferPointer) -> HTTPMethod {
        switch bytes.count {
        case 3:
            if bytes[0] == 0x47 && bytes[1] == 0x45 && bytes[2] == 0x54 { return .GET }
            if bytes[0] == 0x50 && bytes[1] == 0x55 && bytes[2] == 0x54 { return .PUT }
        case 4:
            if bytes[0] == 0x50 && bytes[1] == 0x4F && bytes[2] == 0x53 && bytes[3] == 0x54 { return .POST }
            if bytes[0] == 0x48 && bytes[1] == 0x45 && bytes[2] == 0x41 && bytes[3] == 0x44 { return .HEAD }
        default: break
        }
        return HTTPMethod(rawValue: String(decoding: bytes, as: UTF8.self))
    }
}
