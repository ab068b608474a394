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
    func writeJSONString(into out: inout JSONBytesWriter)
}

extension String: JSONText {
    @inlinable public var stringValue: String { self }
    @inlinable public func writeJSONString(into out: inout JSONBytesWriter) { out.appendString(self) }
}

/// Writes JSON straight into bytes (compact, the same bytes `JSONValue.serialize` produces for the
/// equivalent tree).
///
/// The bytes go into one buffer of its own, allocated with the capacity asked for and doubled
/// when a response outgrows it: an append is a bounds check and a copy, not an `Array` append's
/// uniqueness and capacity checks (those were about a fifth of my-rooms' instructions,
/// bench/history/2026-11.md "Read paths, round 4"). `bytes` copies them out once at the end. A writer is
/// used in place (`var`, `inout`): a copy of it shares the buffer, so only one of them may write.
public struct JSONBytesWriter: JSONObjectSink {
    /// Owns the buffer: frees it when the last copy of the writer goes.
    @usableFromInline final class Storage {
        @usableFromInline var base: UnsafeMutablePointer<UInt8>
        init(capacity: Int) { base = .allocate(capacity: capacity) }
        deinit { base.deallocate() }
    }

    @usableFromInline var storage: Storage
    /// `storage.base`, kept here so that a write touches only the writer's own fields.
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var length = 0
    @usableFromInline var capacity: Int
    /// True once the current object or array has a member, so the next one needs a comma.
    @usableFromInline var needsComma = false

    public init(capacity: Int = 256) {
        self.capacity = max(capacity, 64)
        storage = Storage(capacity: self.capacity)
        base = storage.base
    }

    /// The bytes written so far (a copy).
    public var bytes: [UInt8] { [UInt8](UnsafeBufferPointer(start: base, count: length)) }

    /// How many bytes are written so far.
    @inlinable public var count: Int { length }

    /// Calls `body` with the bytes written so far, in place (valid only during the call).
    @inlinable
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: base, count: length))
    }

    /// Makes room for `n` more bytes: the buffer at least doubles, so appends stay amortised O(1).
    @usableFromInline
    mutating func grow(_ n: Int) {
        let newCapacity = max(capacity * 2, length + n)
        let fresh = Storage(capacity: newCapacity)
        fresh.base.update(from: base, count: length)
        storage = fresh
        base = fresh.base
        capacity = newCapacity
    }

    /// Appends one byte.
    @inlinable @inline(__always)
    public mutating func append(_ byte: UInt8) {
        if length == capacity { grow(1) }
        base[length] = byte
        length &+= 1
    }

    /// Appends bytes as they are.
    @inlinable @inline(__always)
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        let n = bytes.count
        guard n > 0, let from = bytes.baseAddress else { return }
        if capacity &- length < n { grow(n) }
        Self.copy(from, to: base + length, count: n)
        length &+= n
    }

    /// Copies `n` bytes. Most copies here are short (member names, ids, numbers): up to 16 bytes
    /// they are two overlapping word moves (four bytes at a time below 8) instead of a call to
    /// `memmove`, which cost more than the copy itself.
    @inlinable @inline(__always)
    static func copy(_ from: UnsafePointer<UInt8>, to: UnsafeMutablePointer<UInt8>, count n: Int) {
        let src = UnsafeRawPointer(from), dst = UnsafeMutableRawPointer(to)
        if n >= 8 && n <= 16 {
            let head = src.loadUnaligned(as: UInt64.self)
            let tail = src.loadUnaligned(fromByteOffset: n &- 8, as: UInt64.self)
            dst.storeBytes(of: head, as: UInt64.self)
            dst.storeBytes(of: tail, toByteOffset: n &- 8, as: UInt64.self)
        } else if n >= 4 && n < 8 {
            let head = src.loadUnaligned(as: UInt32.self)
            let tail = src.loadUnaligned(fromByteOffset: n &- 4, as: UInt32.self)
            dst.storeBytes(of: head, as: UInt32.self)
            dst.storeBytes(of: tail, toByteOffset: n &- 4, as: UInt32.self)
        } else if n < 4 {
            if n > 0 { to[0] = from[0] }
            if n > 1 { to[1] = from[1] }
            if n > 2 { to[2] = from[2] }
        } else {
            to.update(from: from, count: n)
        }
    }

    /// Appends bytes as they are (an envelope's fixed part, punctuation).
    @inlinable
    public mutating func raw(_ b: [UInt8]) { b.withUnsafeBufferPointer { append($0) } }

    @inlinable @inline(__always)
    public mutating func raw(_ s: StaticString) {
        // A literal of more than one scalar is stored as bytes: read them in place (the closure
        // of `withUTF8Buffer` is not inlined, and cost more than the copy).
        if s.hasPointerRepresentation {
            append(UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
        } else {
            s.withUTF8Buffer { append($0) }
        }
    }

    /// A JSON string literal of `s` (RFC 8259 §7), as `JSONValue.writeString` writes it.
    public mutating func appendString(_ s: String) { JSONValue.writeString(s, to: &self) }

    /// A JSON string literal of UTF-8 bytes as a database hands them over, as
    /// `JSONValue.writeString(utf8:into:)` writes it.
    public mutating func appendString(utf8 bytes: UnsafeRawBufferPointer) { JSONValue.writeString(utf8: bytes, to: &self) }

    /// An integer in decimal (RFC 8259 §6).
    public mutating func appendInteger(_ value: Int64) { JSONValue.writeInt(value, to: &self) }

    /// One object as a value: `{` members `}`.
    @inlinable
    public mutating func objectValue(_ body: (inout JSONBytesWriter) -> Void) {
        append(0x7B)
        needsComma = false
        body(&self)
        append(0x7D)
        needsComma = true
    }

    /// Starts an array element: a comma unless it is the first (`first`).
    @inlinable
    public mutating func separator(first: Bool) {
        if !first { append(0x2C) }
    }

    /// `,"key":` (no comma before an object's first member), written in place (inlined: a key is
    /// a few stores, less than a call).
    @inlinable @inline(__always)
    mutating func key(_ key: StaticString) {
        let n = key.utf8CodeUnitCount
        if capacity &- length < n &+ 4 { grow(n &+ 4) }
        var at = base + length
        if needsComma { at.pointee = 0x2C; at += 1 }
        needsComma = true
        at.pointee = 0x22
        if key.hasPointerRepresentation {
            Self.copy(key.utf8Start, to: at + 1, count: n)  // in place, as `raw(_: StaticString)`
        } else {
            key.withUTF8Buffer { Self.copy($0.baseAddress!, to: at + 1, count: n) }
        }
        at += n &+ 1
        at[0] = 0x22
        at[1] = 0x3A
        length = at + 2 - base
    }

    @inlinable
    public mutating func string(_ key: StaticString, _ value: String) {
        self.key(key)
        appendString(value)
    }

    @inlinable
    public mutating func text<T: JSONText>(_ key: StaticString, _ value: T) {
        self.key(key)
        value.writeJSONString(into: &self)
    }

    @inlinable
    public mutating func int(_ key: StaticString, _ value: Int64) {
        self.key(key)
        appendInteger(value)
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
        if self.capacity &- length < capacity &+ 2 { grow(capacity &+ 2) }
        base[length] = 0x22
        let n = write(UnsafeMutableBufferPointer(start: base + length + 1, count: capacity))
        precondition(n >= 0 && n <= capacity, "asciiString wrote outside its capacity")
        base[length + 1 + n] = 0x22
        length &+= n &+ 2
    }

    @inlinable
    public mutating func object(_ key: StaticString, _ body: (inout JSONBytesWriter) -> Void) {
        self.key(key)
        objectValue(body)
    }

    @inlinable
    public mutating func objects<C: Collection>(_ key: StaticString, _ items: C, _ body: (inout JSONBytesWriter, C.Element) -> Void) {
        self.key(key)
        append(0x5B)
        var first = true
        for item in items {
            separator(first: first)
            first = false
            objectValue { body(&$0, item) }
        }
        append(0x5D)
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

/// Where the escaping and number writers put bytes: a `[UInt8]` (trees, `serialize`) or a
/// `JSONBytesWriter`'s buffer (response bytes). One implementation of each writer serves both.
protocol JSONByteOutput {
    mutating func appendByte(_ byte: UInt8)
    mutating func appendBytes(_ bytes: UnsafeBufferPointer<UInt8>)
}

extension Array: JSONByteOutput where Element == UInt8 {
    @inline(__always) mutating func appendByte(_ byte: UInt8) { append(byte) }
    @inline(__always) mutating func appendBytes(_ bytes: UnsafeBufferPointer<UInt8>) { append(contentsOf: bytes) }
}

extension JSONBytesWriter: JSONByteOutput {
    @inline(__always) mutating func appendByte(_ byte: UInt8) { append(byte) }
    @inline(__always) mutating func appendBytes(_ bytes: UnsafeBufferPointer<UInt8>) { append(bytes) }
}
