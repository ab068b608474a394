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
        for bytes in cases {
            var expected: [UInt8] = []
            JSONValue.writeString(String(decoding: bytes, as: UTF8.self), into: &expected)
            var got: [UInt8] = []
            bytes.withUnsafeBytes { JSONValue.writeString(utf8: $0, into: &got) }
            XCTAssertEqual(got, expected, "\(bytes)")
        }
    }

    /// A `JSONText` that is not a `String` is written by the bytes writer from its own bytes and
    /// by the tree writer as its `String`: the same JSON.
    func testTextValuesWriteTheSameAsStrings() {
        struct Raw: JSONText {
            let bytes: [UInt8]
            var stringValue: String { String(decoding: bytes, as: UTF8.self) }
            func writeJSONString(into out: inout [UInt8]) { bytes.withUnsafeBytes { JSONValue.writeString(utf8: $0, into: &out) } }
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
