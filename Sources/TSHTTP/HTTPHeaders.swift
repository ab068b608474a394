/// An ordered list of header fields with case-insensitive lookup (RFC 9110 §5).
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    public private(set) var fields: [(name: String, value: String)]

    public init() { fields = [] }
    /// Empty, with room for `capacity` fields.
    init(capacity: Int) {
        fields = []
        fields.reserveCapacity(capacity)
    }
    public init(_ fields: [(String, String)]) { self.fields = fields.map { (name: $0.0, value: $0.1) } }
    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    /// The first value of `name` (case-insensitive), or nil.
    public subscript(_ name: String) -> String? {
        for f in fields where asciiCaseInsensitiveEquals(f.name, name) { return f.value }
        return nil
    }

    /// All values of `name`, in order.
    public func values(for name: String) -> [String] {
        fields.compactMap { asciiCaseInsensitiveEquals($0.name, name) ? $0.value : nil }
    }

    /// How many fields are named `name` (no array of their values).
    public func count(of name: String) -> Int {
        var n = 0
        for f in fields where asciiCaseInsensitiveEquals(f.name, name) { n += 1 }
        return n
    }

    /// Whether any field is named `name`.
    public func contains(_ name: String) -> Bool {
        fields.contains { asciiCaseInsensitiveEquals($0.name, name) }
    }

    /// Appends a field (keeps existing ones with the same name).
    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }
    public mutating func add(name: String, value: String) { fields.append((name, value)) }

    /// Replaces the first field named `name` and removes the others, or appends it.
    public mutating func replaceOrAdd(_ name: String, _ value: String) {
        if let i = fields.firstIndex(where: { asciiCaseInsensitiveEquals($0.name, name) }) {
            fields[i].value = value
            var j = fields.count - 1
            while j > i {
                if asciiCaseInsensitiveEquals(fields[j].name, name) { fields.remove(at: j) }
                j -= 1
            }
        } else {
            fields.append((name, value))
        }
    }
    public mutating func replaceOrAdd(name: String, value: String) { replaceOrAdd(name, value) }

    /// Removes every field named `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { asciiCaseInsensitiveEquals($0.name, name) }
    }
    public mutating func remove(name: String) { remove(name) }

    /// Comma-separated list elements of every `name` field, trimmed and lowercased (RFC 9110 §5.6.1).
    public func tokens(for name: String) -> [String] {
        var out: [String] = []
        for f in fields where asciiCaseInsensitiveEquals(f.name, name) {
            for part in f.value.split(separator: ",") {
                let t = part.trimmingOWS()
                if !t.isEmpty { out.append(t.lowercased()) }
            }
        }
        return out
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public var description: String { fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n") }
}

/// ASCII case-insensitive comparison without allocating.
@inline(__always)
func asciiCaseInsensitiveEquals(_ a: String, _ b: String) -> Bool {
    // Case folding keeps the UTF-8 length, and most names a lookup meets differ in length:
    // decided without reading a byte (`utf8.count` is stored for native strings).
    guard a.utf8.count == b.utf8.count else { return false }
    var ai = a.utf8.makeIterator()
    var bi = b.utf8.makeIterator()
    while true {
        let x = ai.next(), y = bi.next()
        guard let x, let y else { return x == nil && y == nil }
        if x == y { continue }
        let lx = (x >= 0x41 && x <= 0x5A) ? x | 0x20 : x
        let ly = (y >= 0x41 && y <= 0x5A) ? y | 0x20 : y
        if lx != ly { return false }
    }
}

extension StringProtocol {
    /// Trims optional whitespace (SP / HTAB) at both ends (RFC 9110 §5.6.3).
    func trimmingOWS() -> String {
        let u = Array(utf8)
        var s = 0, e = u.count
        while s < e && (u[s] == 0x20 || u[s] == 0x09) { s += 1 }
        while e > s && (u[e - 1] == 0x20 || u[e - 1] == 0x09) { e -= 1 }
        return String(decoding: u[s..<e], as: UTF8.self)
    }
}
