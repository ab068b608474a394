/// A JSON object that keeps its members in insertion order (RFC 8259 §4).
///
/// Small objects (the common case in this API) are searched linearly, which beats hashing. Once an
/// object has more than `indexThreshold` members it also keeps a key → position index, so lookups,
/// `set`, equality and hashing stay O(1) per member and building or parsing an object of n keys is
/// O(n), never O(n²) (a 100,000-key request body must not stall an event loop).
/// A duplicate key on `set` replaces the value in place.
public struct JSONObject: Sendable, Hashable, Sequence {
    public private(set) var pairs: [(key: String, value: JSONValue)]
    /// Key → index into `pairs`; present only when `pairs.count > indexThreshold`.
    private var index: [String: Int]?

    /// Members above which the key index is kept.
    public static let indexThreshold = 32

    public init() { pairs = [] }

    public init(_ pairs: [(String, JSONValue)]) {
        self.pairs = []
        self.pairs.reserveCapacity(pairs.count)
        for (k, v) in pairs { self[k] = v }
    }

    /// Members as parsed, in document order, possibly with repeated keys (RFC 8259 §4): a repeated
    /// key keeps its first position and takes its last value, as `set` would. One pass; the index,
    /// when needed, is built once at its final size (no rehashing while it grows).
    init(parsed members: [(key: String, value: JSONValue)]) {
        self.init()
        if members.count <= Self.indexThreshold {
            pairs.reserveCapacity(members.count)
            for (k, v) in members { self[k] = v }
            return
        }
        var idx = [String: Int](minimumCapacity: members.count)
        var out = members
        var kept = 0
        for m in 0..<members.count {
            let key = members[m].key
            if let first = idx[key] {
                out[first].value = members[m].value
            } else {
                idx[key] = kept
                if kept != m { out[kept] = members[m] }
                kept += 1
            }
        }
        out.removeSubrange(kept...)
        pairs = out
        index = kept > Self.indexThreshold ? idx : nil
    }

    /// Reserves room for `n` members.
    public mutating func reserveCapacity(_ n: Int) { pairs.reserveCapacity(n) }

    public var count: Int { pairs.count }
    public var isEmpty: Bool { pairs.isEmpty }
    public var keys: [String] { pairs.map(\.key) }

    /// The position of `key` in `pairs`, or nil.
    public func position(of key: String) -> Int? {
        if let index { return index[key] }
        for i in pairs.indices where pairs[i].key == key { return i }
        return nil
    }

    public subscript(key: String) -> JSONValue? {
        get {
            position(of: key).map { pairs[$0].value }
        }
        set {
            if let i = position(of: key) {
                if let v = newValue {
                    pairs[i].value = v
                } else {
                    remove(at: i)
                }
            } else if let v = newValue {
                appendUnchecked(key, v)
            }
        }
    }

    /// Appends without checking for an existing key; for builders that know keys are unique
    /// (with a duplicate, lookups may find either member).
    public mutating func appendUnchecked(_ key: String, _ value: JSONValue) {
        pairs.append((key, value))
        if index != nil {
            index![key] = pairs.count - 1
        } else if pairs.count > Self.indexThreshold {
            rebuildIndex()
        }
    }

    /// Removes the member at `i`: O(n − i), like the array shift itself.
    private mutating func remove(at i: Int) {
        let key = pairs.remove(at: i).key
        guard index != nil else { return }
        if pairs.count <= Self.indexThreshold { index = nil; return }
        index![key] = nil
        for j in i..<pairs.count { index![pairs[j].key] = j }
    }

    private mutating func rebuildIndex() {
        guard pairs.count > Self.indexThreshold else { index = nil; return }
        var idx = [String: Int](minimumCapacity: pairs.count)
        for (i, p) in pairs.enumerated() { idx[p.key] = i }
        index = idx
    }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> { pairs.makeIterator() }

    /// Order-independent: the same members with equal values.
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
    /// duplicate check of `init(_:)`.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init()
        pairs.reserveCapacity(elements.count)
        for (k, v) in elements { appendUnchecked(k, v) }
        assert(Set(elements.map(\.0)).count == elements.count, "duplicate key in a JSON object literal")
    }
}
