/// A JSON object that keeps its members in insertion order. Lookups are linear, which beats
/// hashing for the small objects of this API; a duplicate key on `set` replaces the value.
public struct JSONObject: Sendable, Hashable, Sequence {
    public private(set) var pairs: [(key: String, value: JSONValue)]

    public init() { pairs = [] }

    public init(_ pairs: [(String, JSONValue)]) {
        self.pairs = []
        self.pairs.reserveCapacity(pairs.count)
        for (k, v) in pairs { self[k] = v }
    }

    public var count: Int { pairs.count }
    public var isEmpty: Bool { pairs.isEmpty }
    public var keys: [String] { pairs.map(\.key) }

    public subscript(key: String) -> JSONValue? {
        get {
            for p in pairs where p.key == key { return p.value }
            return nil
        }
        set {
            if let i = pairs.firstIndex(where: { $0.key == key }) {
                if let v = newValue { pairs[i].value = v } else { pairs.remove(at: i) }
            } else if let v = newValue {
                pairs.append((key, v))
            }
        }
    }

    /// Appends without checking for an existing key; for builders that know keys are unique.
    public mutating func appendUnchecked(_ key: String, _ value: JSONValue) { pairs.append((key, value)) }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> { pairs.makeIterator() }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        guard a.pairs.count == b.pairs.count else { return false }
        for p in a.pairs where b[p.key] != p.value { return false }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent, consistent with ==.
        var acc = 0
        for p in pairs {
            var h = Hasher()
            h.combine(p.key)
            h.combine(p.value)
            acc ^= h.finalize()
        }
        hasher.combine(pairs.count)
        hasher.combine(acc)
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// Keys written in a literal are distinct by construction, so they are appended without the
    /// duplicate check of `init(_:)` (which is quadratic in the number of keys).
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init()
        pairs.reserveCapacity(elements.count)
        for (k, v) in elements { pairs.append((k, v)) }
        assert(Set(elements.map(\.0)).count == elements.count, "duplicate key in a JSON object literal")
    }
}
