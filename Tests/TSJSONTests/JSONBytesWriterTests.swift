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
}
