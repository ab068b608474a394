import TSJSON
import XCTest

/// `JSONPlainStringArray` (interaction-state's body without a tree): byte fixtures it takes, with
/// the strings `JSONValue.parse` gives for them, and fixtures it leaves to the full parse (nil),
/// valid JSON among them.
final class JSONPlainStringArrayTests: XCTestCase {
    let member = Array("postIds".utf8)

    func read(_ text: String, count: ClosedRange<Int> = 1...50) -> [String]? {
        JSONPlainStringArray.read(Array(text.utf8), member: member, count: count)
    }

    func testTakesPlainArraysAndAgreesWithTheFullParse() throws {
        let taken = [
            #"{"postIds":["a"]}"#,
            #"{"postIds":["3c58b32e-1d5e-4031-936a-1c341a92b682","94bd50bc-cbd5-495e-8bdb-b5c2747cf872"]}"#,
            " \t\r\n{ \"postIds\" : [ \"a\" , \"b\" ,\"\", \"x y/z{}[],:\" ] } \n",
            "{\"postIds\":[\"DEL \u{7F} is plain JSON\",\"a longer id, past one 8-byte word: 0123456789abcdef\"]}",
            #"{"postIds":["dup","dup"]}"#,
        ]
        for text in taken {
            let fast = try XCTUnwrap(read(text), text)
            let full = try JSONValue.parse(Array(text.utf8))
            XCTAssertEqual(full["postIds"]?.arrayValue?.compactMap(\.stringValue), fast, text)
            XCTAssertEqual(full.objectValue?.count, 1, text)
        }
        let fifty = "{\"postIds\":[" + (0..<50).map { "\"id\($0)\"" }.joined(separator: ",") + "]}"
        XCTAssertEqual(read(fifty)?.count, 50)
        XCTAssertEqual(read(#"{"postIds":[]}"#, count: 0...3), [])
    }

    func testLeavesEverythingElseToTheFullParse() {
        let fifty = (0..<51).map { "\"id\($0)\"" }.joined(separator: ",")
        let left = [
            "", " ", "{}", "[]", "null", #"{"postIds":[]}"#,                      // empty, or not this shape
            "{\"postIds\":[" + fifty + "]}",                                       // 51 > maxItems
            #"{"postIds":["a\"b"]}"#, #"{"postIds":["a\\b"]}"#, #"{"postIds":["\u0041"]}"#,  // escapes
            "{\"postIds\":[\"é\"]}", "{\"postIds\":[\"\u{01}\"]}", "{\"postIds\":[\"ab\u{80}\"]}",  // non-ASCII, controls
            #"{"postIds":[1]}"#, #"{"postIds":[null]}"#, #"{"postIds":[["a"]]}"#, #"{"postIds":"a"}"#,  // other types
            #"{"postIds":["a"],"x":1}"#, #"{"x":1,"postIds":["a"]}"#, #"{"postIds":["a"],"postIds":["b"]}"#,  // other members
            #"{"postId":["a"]}"#, #"{"postIdsX":["a"]}"#, #"{"PostIds":["a"]}"#,    // another name
            #"{"postIds":["a",]}"#, #"{"postIds":[,"a"]}"#, #"{"postIds":["a" "b"]}"#, #"{"postIds":["a"]"#,  // malformed
            #"{"postIds":["a"]}x"#, #"{"postIds":["a"]} {}"#, #"{"postIds":["a]}"#, "{\"postIds\":[\"a\"]}\u{0B}",
            #"{"postIds" ["a"]}"#, #"{postIds:["a"]}"#,
        ]
        for text in left { XCTAssertNil(read(text), text) }
    }

    /// `ranges` points at the strings `read` returns, and a byte that ends a plain string (a
    /// quote, a backslash, a control, a byte beyond ASCII) is found at every offset of ids up to
    /// five words long, wherever the eight-byte scan's words fall.
    func testRangesAreWhereTheStringsAreAndEveryStopByteIsFound() throws {
        for length in 0...40 {
            let id = String((0..<length).map { Character(UnicodeScalar(UInt8(0x41 + $0 % 26))) })
            let text = "{\"postIds\":[\"x\", \"\(id)\",\"\(id)\"]}"
            let bytes = Array(text.utf8)
            let ranges = try XCTUnwrap(JSONPlainStringArray.ranges(bytes, member: member, count: 1...50), text)
            XCTAssertEqual(ranges.map { String(decoding: bytes[$0], as: UTF8.self) }, read(text), text)
            XCTAssertEqual(read(text), ["x", id, id], text)
            for k in 0..<length {
                for stop: UInt8 in [0x22, 0x5C, 0x00, 0x1F, 0x80, 0xFF] {
                    var changed = bytes
                    changed[ranges[1].lowerBound + k] = stop
                    XCTAssertNil(JSONPlainStringArray.ranges(changed, member: member, count: 1...50), "\(length) \(k) \(stop)")
                }
            }
        }
    }
}
