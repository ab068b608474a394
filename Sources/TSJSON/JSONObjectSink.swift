/// Where a shape writes its members, in order: the one description of a response shape (e.g.
/// `Room.writeJSON(into:)`) feeds either the bytes of a response (`JSONBytesWriter`, no tree,
/// RFC 8259 §4 objects written as they go) or a `JSONValue` tree (`JSONTreeWriter`) for the paths
/// that still compose trees. Keys are `StaticString`s of plain ASCII that needs no escaping
/// (member names of the contract); values are escaped as `JSONValue.writeString` does (§7).
public protocol JSONObjectSink {
    mutating func string(_ key: StaticString, _ value: String)
    /// A string value from wherever it lives (`String`, or a database column's bytes: `JSONText`).
    mutating func text<T: JSONText>(_ key: StaticString, _ value: T)
    mutating func int(_ key: StaticString, _ value: Int64)
    mutating func bool(_ key: StaticString, _ value: Bool)
    mutating func null(_ key: StaticString)
    /// A string of at most `capacity` ASCII bytes that need no escaping (digits, `-`, `:`, `T`, …),
    /// written in place by `write`, which returns how many bytes it wrote.
    mutating func asciiString(_ key: StaticString, capacity: Int, _ write: (UnsafeMutableBufferPointer<UInt8>) -> Int)
    /// A nested object whose members `body` writes.
    mutating func object(_ key: StaticString, _ body: (inout Self) -> Void)
    /// An array of objects, one per item, each written by `body`.
    mutating func objects<C: Collection>(_ key: StaticString, _ items: C, _ body: (inout Self, C.Element) -> Void)
}

extension JSONObjectSink {
    /// The string, or `null` for nil: a field without a value is `null`, never omitted.
    @inlinable
    public mutating func optionalString(_ key: StaticString, _ value: String?) {
        if let value { string(key, value) } else { null(key) }
    }

    /// A sink that keeps `String`s (a tree) takes the text's `String`.
    @inlinable
    public mutating func text<T: JSONText>(_ key: StaticString, _ value: T) {
        string(key, value.stringValue)
    }

    /// The text, or `null` for nil.
    @inlinable
    public mutating func optionalText<T: JSONText>(_ key: StaticString, _ value: T?) {
        if let value { text(key, value) } else { null(key) }
    }
}

/// A string value a shape writes: a Swift `String`, or text that stays where it is stored (a
/// database column's UTF-8 bytes, valid while the row is) and is escaped straight from there into
/// response bytes. Both give the same JSON: `writeJSONString` appends exactly the bytes
/// `JSONValue.writeString(stringValue)` would (RFC 8259 §7).
public protocol JSONText {
    var stringValue: String { get }
    func writeJSONString(into out: inout [UInt8])
}

extension String: JSONText {
    @inlinable public var stringValue: String { self }
    @inlinable public func writeJSONString(into out: inout [UInt8]) { JSONValue.writeString(self, into: &out) }
}

/// Writes JSON straight into bytes (compact, the same bytes `JSONValue.serialize` produces for the
/// equivalent tree).
public struct JSONBytesWriter: JSONObjectSink {
    public var bytes: [UInt8]
    /// True once the current object or array has a member, so the next one needs a comma.
    @usableFromInline var needsComma = false

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Appends bytes as they are (an envelope's fixed part, punctuation).
    @inlinable
    public mutating func raw(_ b: [UInt8]) { bytes.append(contentsOf: b) }

    @inlinable
    public mutating func raw(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// One object as a value: `{` members `}`.
    @inlinable
    public mutating func objectValue(_ body: (inout JSONBytesWriter) -> Void) {
        bytes.append(0x7B)
        needsComma = false
        body(&self)
        bytes.append(0x7D)
        needsComma = true
    }

    /// Starts an array element: a comma unless it is the first (`first`).
    @inlinable
    public mutating func separator(first: Bool) {
        if !first { bytes.append(0x2C) }
    }

    /// `,"key":` (no comma before an object's first member), in one append for a key of at most
    /// 28 bytes (every member name of the contract): five appends cost five capacity and
    /// uniqueness checks, about a tenth of my-rooms' instructions (bench/RESULTS.md, "Read
    /// paths, round 3").
    @inlinable
    mutating func key(_ key: StaticString) {
        let n = key.utf8CodeUnitCount
        let comma = needsComma
        needsComma = true
        guard n <= 28, key.hasPointerRepresentation else {
            if comma { bytes.append(0x2C) }
            bytes.append(0x22)
            key.withUTF8Buffer { bytes.append(contentsOf: $0) }
            bytes.append(0x22)
            bytes.append(0x3A)
            return
        }
        var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)  // 32 bytes: `,` `"` 28 `"` `:`
        withUnsafeMutableBytes(of: &buffer) { b in
            var at = 0
            if comma { b[0] = 0x2C; at = 1 }
            b[at] = 0x22
            UnsafeMutableRawBufferPointer(rebasing: b[(at + 1)..<(at + 1 + n)])
                .copyMemory(from: UnsafeRawBufferPointer(start: key.utf8Start, count: n))
            b[at + 1 + n] = 0x22
            b[at + 2 + n] = 0x3A
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: b[0..<(at + 3 + n)]))
        }
    }

    @inlinable
    public mutating func string(_ key: StaticString, _ value: String) {
        self.key(key)
        JSONValue.writeString(value, into: &bytes)
    }

    @inlinable
    public mutating func text<T: JSONText>(_ key: StaticString, _ value: T) {
        self.key(key)
        value.writeJSONString(into: &bytes)
    }

    @inlinable
    public mutating func int(_ key: StaticString, _ value: Int64) {
        self.key(key)
        JSONValue.writeInteger(value, into: &bytes)
    }

    @inlinable
    public mutating func bool(_ key: StaticString, _ value: Bool) {
        self.key(key)
        if value { raw("true") } else { raw("false") }
    }

    @inlinable
    public mutating func null(_ key: StaticString) {
        self.key(key)
        raw("null")
    }

    @inlinable
    public mutating func asciiString(_ key: StaticString, capacity: Int, _ write: (UnsafeMutableBufferPointer<UInt8>) -> Int) {
        self.key(key)
        bytes.append(0x22)
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: capacity))
        let n = bytes.withUnsafeMutableBufferPointer { b in
            write(UnsafeMutableBufferPointer(rebasing: b[start..<(start + capacity)]))
        }
        bytes.removeLast(capacity - n)
        bytes.append(0x22)
    }

    @inlinable
    public mutating func object(_ key: StaticString, _ body: (inout JSONBytesWriter) -> Void) {
        self.key(key)
        objectValue(body)
    }

    @inlinable
    public mutating func objects<C: Collection>(_ key: StaticString, _ items: C, _ body: (inout JSONBytesWriter, C.Element) -> Void) {
        self.key(key)
        bytes.append(0x5B)
        var first = true
        for item in items {
            separator(first: first)
            first = false
            objectValue { body(&$0, item) }
        }
        bytes.append(0x5D)
        needsComma = true
    }
}

/// Builds the `JSONObject` of a shape, for the paths that compose trees (e.g. a room inside a
/// room detail, a Socket.IO payload).
public struct JSONTreeWriter: JSONObjectSink {
    public var object = JSONObject()

    public init() {}

    public mutating func string(_ key: StaticString, _ value: String) { object.appendUnchecked(key.description, .string(value)) }
    public mutating func int(_ key: StaticString, _ value: Int64) { object.appendUnchecked(key.description, .int(value)) }
    public mutating func bool(_ key: StaticString, _ value: Bool) { object.appendUnchecked(key.description, .bool(value)) }
    public mutating func null(_ key: StaticString) { object.appendUnchecked(key.description, .null) }

    public mutating func asciiString(_ key: StaticString, capacity: Int, _ write: (UnsafeMutableBufferPointer<UInt8>) -> Int) {
        object.appendUnchecked(key.description, .string(String(unsafeUninitializedCapacity: capacity, initializingUTF8With: write)))
    }

    public mutating func object(_ key: StaticString, _ body: (inout JSONTreeWriter) -> Void) {
        var nested = JSONTreeWriter()
        body(&nested)
        object.appendUnchecked(key.description, .object(nested.object))
    }

    public mutating func objects<C: Collection>(_ key: StaticString, _ items: C, _ body: (inout JSONTreeWriter, C.Element) -> Void) {
        var array: [JSONValue] = []
        array.reserveCapacity(items.count)
        for item in items {
            var nested = JSONTreeWriter()
            body(&nested, item)
            array.append(.object(nested.object))
        }
        object.appendUnchecked(key.description, .array(array))
    }

    /// The tree of one shape: `JSONTreeWriter.build { shape.writeJSON(into: &$0) }`.
    public static func build(_ body: (inout JSONTreeWriter) -> Void) -> JSONValue {
        var w = JSONTreeWriter()
        body(&w)
        return .object(w.object)
    }
}

extension JSONValue {
    /// Writes an integer in decimal (RFC 8259 §6), as `serialize` does for `.int`.
    public static func writeInteger(_ value: Int64, into out: inout [UInt8]) { writeInt(value, into: &out) }
}
