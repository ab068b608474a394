import Foundation
import TSJSON
import XCTest

/// `JSONBytesWriter` writes the same bytes as `JSONValue.serialize` of the equivalent tree, and
/// `JSONTreeWriter` builds that tree (RFC 8259 §4, §6, §7).
final class JSONBytesWriterTests: XCTestCase {
    struct Shape {
        var s: String
        var o: String?
        var i: Int64
        var b: Bool
        var items: [Int64]

        func writeJSON<S: JSONObjectSink>(into w: inout S) {
            w.string("s", s)
            w.optionalString("o", o)
            w.int("i", i)
            w.bool("b", b)
            w.null("n")
            w.asciiString("a", capacity: 8) { buf in
                for (k, c) in "12:34".utf8.enumerated() { buf[k] = c }
                return 5
            }
            w.object("nested") { $0.int("x", i); $0.object("empty") { _ in } }
            w.objects("items", items) { $0.int("v", $1) }
        }

        var tree: JSONValue {
            .object(["s": .string(s), "o": .optional(o), "i": .int(i), "b": .bool(b), "n": .null, "a": "12:34",
                     "nested": ["x": .int(i), "empty": .object(JSONObject())], "items": .array(items.map { ["v": .int($0)] })])
        }
    }

    func testBytesAndTreeMatchTheSerializerForOddValues() {
        let strings = ["", "plain", "\"", "\\", "/", "\u{00}\u{01}\u{1F}\u{7F}", "\t\n\r\u{08}\u{0C}", "日本語 🎉 👩‍👩‍👧 e\u{301}",
                       "\u{2028}\u{2029}", String(repeating: "x\"", count: 300)]
        let ints: [Int64] = [0, 1, -1, 42, Int64.max, Int64.min, 1_000_000_007]
        for (k, s) in strings.enumerated() {
            let shape = Shape(s: s, o: k % 2 == 0 ? nil : s, i: ints[k % ints.count], b: k % 2 == 0, items: Array(ints.prefix(k % 4)))
            var bytes = JSONBytesWriter()
            bytes.objectValue { shape.writeJSON(into: &$0) }
            XCTAssertEqual(bytes.bytes, shape.tree.serialized(), s)
            XCTAssertEqual(JSONTreeWriter.build { shape.writeJSON(into: &$0) }, shape.tree, s)
            XCTAssertEqual(try JSONValue.parse(bytes.bytes), shape.tree, s)
        }
    }

    /// Integers are their decimal text (RFC 8259 §6), single digits (written without the digit
    /// loop) and their neighbours included.
    func testIntegersAreTheirDecimalText() {
        for v in Array(Int64(-1000)...1000) + [Int64.max, Int64.min, Int64.max - 1, Int64.min + 1, 1_000_000_007] {
            var w = JSONBytesWriter(capacity: 1)
            w.appendInteger(v)
            XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), String(v))
        }
    }

    /// The writer's buffer starts small and doubles: every kind of write (a key, an escaped
    /// string, a number, an in-place ASCII value, raw bytes) lands across a growth somewhere in
    /// this run, and the bytes still equal the serializer's, whatever the starting capacity.
    func testBytesAreTheSameWhereverTheBufferGrows() {
        let shapes = (0..<40).map { k in
            Shape(s: String(repeating: "ab\"c\u{01}", count: k % 7), o: k % 3 == 0 ? nil : "o\(k)", i: Int64(k) * 1_000_003 - 7,
                  b: k % 2 == 0, items: Array(repeating: Int64(k), count: k % 5))
        }
        let tree = JSONValue.array(shapes.map(\.tree))
        for capacity in [0, 1, 63, 64, 65, 100, 1000] {
            var w = JSONBytesWriter(capacity: capacity)
            w.raw("[")
            for (k, shape) in shapes.enumerated() {
                w.separator(first: k == 0)
                w.objectValue { shape.writeJSON(into: &$0) }
            }
            w.raw("]")
            XCTAssertEqual(w.bytes, tree.serialized(), "capacity \(capacity)")
            XCTAssertEqual(w.count, w.bytes.count)
            XCTAssertEqual(w.withBytes { Array($0) }, w.bytes)
        }
    }

    func testArrayOfObjectsWithSeparators() {
        var w = JSONBytesWriter()
        w.raw(#"{"data":"#)
        w.raw("[")
        for k in 0..<3 {
            w.separator(first: k == 0)
            w.objectValue { $0.int("k", Int64(k)) }
        }
        w.raw("]}")
        XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), #"{"data":[{"k":0},{"k":1},{"k":2}]}"#)
    }

    /// `writeString(utf8:)` (a database column's bytes, no `String`) writes exactly what
    /// `writeString(String(decoding:))` writes: escapes on ASCII, the same U+FFFD repair of
    /// ill-formed UTF-8 (lone continuation bytes, truncated sequences, overlongs, surrogates).
    func testUTF8BytesEscapeLikeTheirDecodedString() {
        var cases: [[UInt8]] = ["", "plain", "\"q\\b", "\u{00}\u{01}\u{1F}\u{7F}\t\n", "日本語 🎉 e\u{301}", "\u{2028}"].map { Array($0.utf8) }
        cases += [[0x80], [0xC3], [0xE6, 0x97], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xFF, 0x22, 0x41], [0x41, 0xF0, 0x9F, 0x8E]]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<500 { cases.append((0..<Int.random(in: 0...12, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }) }
        // Longer, mostly plain ASCII with a rare byte to escape or beyond ASCII at any offset: the
        // eight-bytes-at-a-time scan must find each of them (every position of a 64-bit word).
        let rare: [UInt8] = [0x00, 0x01, 0x08, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7E, 0x7F, 0x80, 0xC3, 0xFF]
        for length in 0...40 {
            for _ in 0..<40 {
                var bytes = (0..<length).map { _ in UInt8.random(in: 0x23...0x5B, using: &rng) }
                if length > 0 { for _ in 0..<Int.random(in: 0...2, using: &rng) { bytes[Int.random(in: 0..<length, using: &rng)] = rare.randomElement(using: &rng)! } }
                cases.append(bytes)
            }
        }
        for k in 0..<24 {  // one special byte at each offset of three words
            for special in [UInt8(0x22), 0x5C, 0x0A, 0x1F, 0x80] {
                var bytes = [UInt8](repeating: 0x61, count: 24)
                bytes[k] = special
                cases.append(bytes)
            }
        }
        for bytes in cases {
            var expected: [UInt8] = []
            JSONValue.writeString(String(decoding: bytes, as: UTF8.self), into: &expected)
            XCTAssertEqual(expected, Self.referenceLiteral(String(decoding: bytes, as: UTF8.self)), "\(bytes)")
            var got: [UInt8] = []
            bytes.withUnsafeBytes { JSONValue.writeString(utf8: $0, into: &got) }
            XCTAssertEqual(got, expected, "\(bytes)")
        }
    }

    /// RFC 8259 §7 one byte at a time (the writer's code before its eight-byte scan): the
    /// independent reference both `writeString`s are checked against.
    static func referenceLiteral(_ s: String) -> [UInt8] {
        var out: [UInt8] = [0x22]
        for b in s.utf8 {
            switch b {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, 0x6E]
            case 0x0D: out += [0x5C, 0x72]
            case 0x09: out += [0x5C, 0x74]
            case 0x08: out += [0x5C, 0x62]
            case 0x0C: out += [0x5C, 0x66]
            case 0..<0x20: out += Array(String(format: "\\u%04x", b).utf8)
            default: out.append(b)
            }
        }
        return out + [0x22]
    }

    /// Member names up to 28 bytes go out in one append, longer ones byte group by byte group:
    /// the same JSON either way, commas included.
    func testShortAndLongMemberNames() {
        var w = JSONBytesWriter()
        w.objectValue {
            $0.int("a", 1)
            $0.int("exactly_twenty_eight_bytes__", 2)
            $0.int("twenty_nine_bytes_is_one_more", 3)
            $0.object("a_nested_object_with_a_rather_long_name") { $0.bool("b", true); $0.null("c") }
        }
        let tree: JSONValue = ["a": 1, "exactly_twenty_eight_bytes__": 2, "twenty_nine_bytes_is_one_more": 3,
                               "a_nested_object_with_a_rather_long_name": ["b": true, "c": .null]]
        XCTAssertEqual(w.bytes, tree.serialized())
    }

    /// A `JSONText` that is not a `String` is written by the bytes writer from its own bytes and
    /// by the tree writer as its `String`: the same JSON.
    func testTextValuesWriteTheSameAsStrings() {
        struct Raw: JSONText {
            let bytes: [UInt8]
            var stringValue: String { String(decoding: bytes, as: UTF8.self) }
            func writeJSONString(into out: inout JSONBytesWriter) { bytes.withUnsafeBytes { out.appendString(utf8: $0) } }
        }
        for s in ["", "a\"b", "Zoë 🦊 \u{01}"] {
            let raw = Raw(bytes: Array(s.utf8))
            var w = JSONBytesWriter()
            w.objectValue { $0.text("t", raw); $0.optionalText("o", Optional(raw)); $0.optionalText("n", Raw?.none) }
            let tree: JSONValue = ["t": .string(s), "o": .string(s), "n": .null]
            XCTAssertEqual(w.bytes, tree.serialized(), s)
            XCTAssertEqual(JSONTreeWriter.build { $0.text("t", raw); $0.optionalText("o", Optional(raw)); $0.optionalText("n", Raw?.none) }, tree, s)
        }
    }
}
