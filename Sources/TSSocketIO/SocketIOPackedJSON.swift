import TSJSON

/// A JSON value kept for a socket's whole life but rarely read (the CONNECT auth payload, the
/// authenticator's data): stored serialized, one byte buffer, and parsed again on access,
/// instead of a tree of objects, arrays and strings per socket. The value read back is the one
/// stored (the serializer writes what the parser reads back).
struct SocketIOPackedJSON: Sendable {
    private let bytes: [UInt8]

    init(_ value: JSONValue) {
        // Copied to an exactly sized buffer (the serializer's grows by doubling).
        let out = value.serialized()
        bytes = [UInt8](unsafeUninitializedCapacity: out.count) { buf, n in
            _ = buf.initialize(fromContentsOf: out)
            n = out.count
        }
    }

    var value: JSONValue { (try? JSONValue.parse(bytes, maxDepth: Int.max)) ?? .null }
}
