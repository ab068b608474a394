import XCTest
@testable import TSJSON

/// Large and deep documents: what a hostile request body looks like. Correctness only; the
/// parse rate is measured by `touchsync-bench json` (bench/RESULTS.md), not timed here.
final class JSONLargeDocumentTests: XCTestCase {
    /// `{"00000":0,"00001":1,…,"99999":9,"pad":"xxx…"}`: 100,000 keys, exactly `size` bytes.
    static func manyKeysObject(keys: Int = 100_000, size: Int = 1 << 20) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(size)
        for k in 0..<keys {
            var digits = Array(String(k).utf8)
            while digits.count < 5 { digits.insert(UInt8(ascii: "0"), at: 0) }
            out.append(UInt8(ascii: "\""))
            out += digits
            out += Array("\":".utf8)
            out.append(UInt8(ascii: "0") + UInt8(k % 10))
            out.append(UInt8(ascii: ","))
        }
        let tail = Array("\"pad\":\"\"}".utf8)
        let padding = max(0, size - out.count - tail.count)
        out += Array("\"pad\":\"".utf8)
        out += [UInt8](repeating: UInt8(ascii: "x"), count: padding)
        out += Array("\"}".utf8)
        return out
    }

    func testOneMebibyteObjectOfOneHundredThousandKeysParses() throws {
        let body = Self.manyKeysObject()
        XCTAssertEqual(body.count, 1 << 20)
        let value = try JSONValue.parse(body)
        let object = try XCTUnwrap(value.objectValue)
        XCTAssertEqual(object.count, 100_001)
        XCTAssertEqual(object.keys.first, "00000")
        XCTAssertEqual(object.keys[99_999], "99999")
        XCTAssertEqual(object.keys.last, "pad")
        XCTAssertEqual(object["00000"], .int(0))
        XCTAssertEqual(object["54321"], .int(1))
        XCTAssertEqual(object["99999"], .int(9))
        XCTAssertNil(object["100000"])
        XCTAssertEqual(object["pad"]?.stringValue?.utf8.count, (1 << 20) - 1_000_001 - 9)
        // Round trip: the serializer writes the same bytes back.
        XCTAssertEqual(value.serialized(), body)
    }

    func testDuplicateKeysInALargeObjectKeepTheFirstPositionAndTheLastValue() throws {
        var text = "{"
        for k in 0..<1_000 { text += "\"k\(k)\":\(k)," }
        text += "\"k7\":\"again\",\"k999\":null}"
        let object = try XCTUnwrap(JSONValue.parse(text).objectValue)
        XCTAssertEqual(object.count, 1_000)
        XCTAssertEqual(object.keys[7], "k7")
        XCTAssertEqual(object["k7"], .string("again"))
        XCTAssertEqual(object["k999"], .null)
        XCTAssertThrowsError(try JSONValue.parse(text, rejectDuplicateKeys: true)) {
            XCTAssertEqual(($0 as? JSONParseError)?.kind, .duplicateKey)
        }
    }

    func testLargeObjectsCompareAndHashIndependentlyOfOrderAndSurviveRemoval() throws {
        let n = 5_000
        let forward = JSONObject((0..<n).map { ("k\($0)", JSONValue.int(Int64($0))) })
        let backward = JSONObject((0..<n).reversed().map { ("k\($0)", JSONValue.int(Int64($0))) })
        XCTAssertEqual(forward, backward)
        XCTAssertEqual(forward.hashValue, backward.hashValue)
        var changed = backward
        changed["k4999"] = .int(-1)
        XCTAssertNotEqual(forward, changed)

        // Removal shifts the members behind it (O(n) each, as in an array); kept to 500 here.
        var shrinking = JSONObject((0..<1_000).map { ("k\($0)", JSONValue.int(Int64($0))) })
        for k in stride(from: 0, to: 1_000, by: 2) { shrinking["k\(k)"] = nil }
        XCTAssertEqual(shrinking.count, 500)
        XCTAssertNil(shrinking["k0"])
        XCTAssertEqual(shrinking["k1"], .int(1))
        XCTAssertEqual(shrinking["k999"], .int(999))
        shrinking["k1"] = .null
        XCTAssertEqual(shrinking.keys.first, "k1")
        XCTAssertEqual(shrinking.keys.prefix(3), ["k1", "k3", "k5"])
        // Shrunk below the index threshold: linear lookups again, still right.
        var small = JSONObject((0..<40).map { ("s\($0)", JSONValue.int(Int64($0))) })
        for k in 0..<30 { small["s\(k)"] = nil }
        XCTAssertEqual(small.keys, (30..<40).map { "s\($0)" })
        XCTAssertEqual(small["s35"], .int(35))
        small["s100"] = .bool(true)
        XCTAssertEqual(small.keys.last, "s100")
    }

    func testLongStringsWithEscapesParse() throws {
        // 200,000 escapes in one string: the escaped path appends, never rebuilds.
        let unit = #"a\n\u00e9\ud83d\ude00"#
        let text = "\"" + String(repeating: unit, count: 50_000) + "\""
        let s = try XCTUnwrap(JSONValue.parse(text).stringValue)
        XCTAssertEqual(s, String(repeating: "a\né😀", count: 50_000))
    }

    func testLargeArraysAndNumbersParse() throws {
        let text = "[" + (0..<100_000).map { "\($0 - 50_000).5e1" }.joined(separator: ",") + "]"
        let a = try XCTUnwrap(JSONValue.parse(text).arrayValue)
        XCTAssertEqual(a.count, 100_000)
        XCTAssertEqual(a[0], .double(-500_005))
        XCTAssertEqual(a[99_999], .double(499_995))
    }

    func testNestingPastTheLimitIsRefusedAsTooDeep() {
        for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
            let atLimit = String(repeating: open, count: 64) + "1" + String(repeating: close, count: 64)
            XCTAssertNoThrow(try JSONValue.parse(atLimit, maxDepth: 64))
            let over = String(repeating: open, count: 65) + "1" + String(repeating: close, count: 65)
            XCTAssertThrowsError(try JSONValue.parse(over, maxDepth: 64)) {
                XCTAssertEqual(($0 as? JSONParseError)?.kind, .tooDeep)
            }
        }
        // A million opening brackets fail at the limit, without recursing a million times.
        let hostile = [UInt8](repeating: UInt8(ascii: "["), count: 1_000_000)
        XCTAssertThrowsError(try JSONValue.parse(hostile)) {
            XCTAssertEqual(($0 as? JSONParseError)?.kind, .tooDeep)
        }
        // Malformed input is a syntax error, not "too deep".
        XCTAssertThrowsError(try JSONValue.parse("[[1,]]")) { XCTAssertEqual(($0 as? JSONParseError)?.kind, .syntax) }
    }
}
