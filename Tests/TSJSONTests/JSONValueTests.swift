import XCTest
@testable import TSJSON

final class JSONValueTests: XCTestCase {
    func testParsesEveryKindAndKeepsKeyOrder() throws {
        let v = try JSONValue.parse(#" {"b": [1, -2, 3.5, 1e3, true, false, null], "a": "x", "c": {}} "#)
        XCTAssertEqual(v.objectValue?.keys, ["b", "a", "c"])
        XCTAssertEqual(v["b"], [1, -2, 3.5, 1000.0, true, false, nil])
        XCTAssertEqual(v["a"]?.stringValue, "x")
        XCTAssertEqual(v["c"], .object([:]))
        XCTAssertEqual(v.serializedString(), #"{"b":[1,-2,3.5,1000,true,false,null],"a":"x","c":{}}"#)
    }

    func testIntegersStayIntegersAndLargeOnesAreExact() throws {
        XCTAssertEqual(try JSONValue.parse("9223372036854775807"), .int(Int64.max))
        XCTAssertEqual(try JSONValue.parse("-9223372036854775808"), .int(Int64.min))
        XCTAssertEqual(try JSONValue.parse("12345678901234567890"), .double(12345678901234567890))
        XCTAssertEqual(JSONValue.int(-42).serializedString(), "-42")
        XCTAssertEqual(JSONValue.int(0).serializedString(), "0")
        XCTAssertEqual(JSONValue.double(.nan).serializedString(), "null")
        XCTAssertEqual(JSONValue.double(0.25).serializedString(), "0.25")
    }

    func testStringEscapesRoundTrip() throws {
        let raw = "quote\" back\\ nl\n tab\t ctl\u{01} é 😀 /"
        let text = JSONValue.string(raw).serializedString()
        XCTAssertEqual(text, #""quote\" back\\ nl\n tab\t ctl\u0001 é 😀 /""#)
        XCTAssertEqual(try JSONValue.parse(text), .string(raw))
        XCTAssertEqual(try JSONValue.parse(#""\ud83d\ude00 \u00e9 \/""#), .string("😀 é /"))
    }

    func testRejectsMalformedDocuments() {
        let bad = ["", "{", "[1,]", "{\"a\":}", "01", "1.", "-", "tru", "\"abc", "\"\u{01}\"", "\"\\x\"",
                   "\"\\ud83d\"", "\"\\ude00\"", "{\"a\" 1}", "[1 2]", "1 2", "nul", "{1:2}", "+1", ".5"]
        for text in bad {
            XCTAssertThrowsError(try JSONValue.parse(text), "accepted: \(text)")
        }
        XCTAssertThrowsError(try JSONValue.parse([0x22, 0xFF, 0x22]), "invalid UTF-8 accepted")
    }

    func testDepthLimitRefusesDeepNesting() {
        let deep = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        XCTAssertThrowsError(try JSONValue.parse(deep))
        XCTAssertNoThrow(try JSONValue.parse(deep, maxDepth: 400))
    }

    func testDuplicateKeysLastWinsUnlessRejected() throws {
        let text = #"{"alg":"none","x":{"k":1,"k":2},"alg":"HS256"}"#
        let lenient = try JSONValue.parse(text)
        XCTAssertEqual(lenient["alg"], .string("HS256"))
        XCTAssertEqual(lenient["x"]?["k"], .int(2))
        XCTAssertEqual(lenient.objectValue?.keys, ["alg", "x"])
        XCTAssertThrowsError(try JSONValue.parse(text, rejectDuplicateKeys: true)) {
            XCTAssertEqual(($0 as? JSONParseError)?.reason, "duplicate key")
            XCTAssertEqual(($0 as? JSONParseError)?.offset, 25)  // the inner second "k", the first repeat
        }
        XCTAssertThrowsError(try JSONValue.parse(Array(#"[{"a":1,"b":2,"a":3}]"#.utf8), rejectDuplicateKeys: true))
        // Same key in sibling objects is not a duplicate.
        XCTAssertEqual(try JSONValue.parse(#"[{"a":1},{"a":2}]"#, rejectDuplicateKeys: true).arrayValue?.count, 2)
    }

    func testAccessorsAndOptionals() {
        XCTAssertEqual(JSONValue.double(3).intValue, 3)
        XCTAssertNil(JSONValue.double(3.5).intValue)
        XCTAssertEqual(JSONValue.int(2).doubleValue, 2)
        XCTAssertEqual(JSONValue.optional(nil as String?), .null)
        var o: JSONObject = ["a": 1]
        o["a"] = 2
        o["b"] = nil
        o["c"] = "x"
        XCTAssertEqual(JSONValue.object(o).serializedString(), #"{"a":2,"c":"x"}"#)
        XCTAssertEqual(JSONValue.object(["a": 1, "b": 2]), JSONValue.object(["b": 2, "a": 1]))
    }
}
