// RFC 3629 §4 (UTF-8 syntax), as required for text frames and close reasons by RFC 6455 §5.6/§8.1.

/// Incremental UTF-8 validator: accepts input in pieces (fragments) and rejects as soon as a
/// prefix can no longer be extended to valid UTF-8 ("fail fast"). Rejects overlongs,
/// surrogates (U+D800–DFFF) and code points above U+10FFFF.
public struct UTF8Validator: Sendable, Equatable {
    /// Continuation bytes still expected for the current scalar.
    private var pending: UInt8 = 0
    /// Allowed range of the next continuation byte (narrowed after E0/ED/F0/F4 leads).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    public init() {}

    /// True when the input so far ends on a scalar boundary.
    public var isComplete: Bool { pending == 0 }

    /// Feed more bytes. Returns false if the input so far is not a prefix of valid UTF-8;
    /// the validator must then be discarded.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        let count = bytes.count
        while i < count {
            let b = bytes[i]
            i += 1
            if pending == 0 {
                if b < 0x80 { continue }
                switch b {
                case 0xC2...0xDF: pending = 1
                case 0xE0: pending = 2; lower = 0xA0      // no overlongs
                case 0xE1...0xEC, 0xEE...0xEF: pending = 2
                case 0xED: pending = 2; upper = 0x9F      // no surrogates
                case 0xF0: pending = 3; lower = 0x90      // no overlongs
                case 0xF1...0xF3: pending = 3
                case 0xF4: pending = 3; upper = 0x8F      // ≤ U+10FFFF
                default: return false                     // 80–C1, F5–FF
                }
            } else {
                guard b >= lower && b <= upper else { return false }
                pending -= 1
                lower = 0x80
                upper = 0xBF
            }
        }
        return true
    }

    public mutating func feed(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// Whole-buffer check.
    public static func isValid(_ bytes: [UInt8]) -> Bool {
        var v = UTF8Validator()
        return v.feed(bytes) && v.isComplete
    }
}
