import Foundation
import XCTest
@testable import TSJSON

/// `JSONValueDecoder` reads what Foundation's `JSONDecoder` reads from the same JSON, and fails
/// with the same kind of `DecodingError` at the same path, except where swift-corelibs-foundation
/// gives no path (a number that does not fit: ours names the member) or calls `null` a type
/// mismatch (ours is `valueNotFound`, as `Decoder`'s documentation says and Apple's does).
final class JSONValueDecoderTests: XCTestCase {
    struct Item: Codable, Equatable {
        var n: Int
        var ratio: Double
        var small: UInt8
        var name: String?
        var on: Bool
        var tags: [String]
        var tree: JSONValue
    }

    struct Outer: Codable, Equatable {
        var items: [Item]
        var map: [String: Int]
        var missing: Int?
    }

    private static let text = #"{"items":[{"n":3,"ratio":2,"small":255,"name":null,"on":true,"tags":["a","b"],"tree":{"z":[1,2.5,null],"a":"x"}},{"n":-1.0,"ratio":0.5,"small":0,"on":false,"tags":[],"tree":7}],"map":{"k":1},"extra":"ignored"}"#

    func testReadsWhatJSONDecoderReads() throws {
        let mine = try JSONValueDecoder.decode(Outer.self, from: try JSONValue.parse(Self.text))
        let foundation = try JSONDecoder().decode(Outer.self, from: Data(Self.text.utf8))
        XCTAssertEqual(mine.items.map(\.n), foundation.items.map(\.n))
        XCTAssertEqual(mine.items.map(\.tags), foundation.items.map(\.tags))
        XCTAssertEqual(mine.map, foundation.map)
        XCTAssertNil(mine.missing)
        XCTAssertEqual(mine.items[0].tree.objectValue?.keys, ["z", "a"], "a JSONValue member is taken as parsed, in order")
        XCTAssertEqual(mine.items[0].tree["z"], [1, 2.5, nil])
        XCTAssertEqual(mine.items[1].tree, .int(7))
        XCTAssertEqual(try JSONValueDecoder.decode(JSONValue.self, from: ["a": 1]), ["a": 1])
    }

    func testFailsAsJSONDecoderFailsAtTheSamePath() throws {
        // With the failure where JSONDecoder's differs (nil: the same as JSONDecoder's).
        let cases: [(String, String?)] = [
            (#"{"items":[{"n":3,"ratio":1,"small":256,"on":true,"tags":[],"tree":1}],"map":{}}"#, #"dataCorrupted at ["items", "Index 0", "small"]"#),
            (#"{"items":[{"n":3.5,"ratio":1,"small":1,"on":true,"tags":[],"tree":1}],"map":{}}"#, #"dataCorrupted at ["items", "Index 0", "n"]"#),
            (#"{"items":[{"n":3,"ratio":1,"small":1,"on":null,"tags":[],"tree":1}],"map":{}}"#, #"valueNotFound at ["items", "Index 0", "on"]"#),
            (#"{"items":[{"n":3,"ratio":"1","small":1,"on":true,"tags":[],"tree":1}],"map":{}}"#, nil),
            (#"{"items":[{"n":3,"ratio":1,"small":1,"on":true,"tags":[1],"tree":1}],"map":{}}"#, nil),
            (#"{"items":[{"ratio":1,"small":1,"on":true,"tags":[],"tree":1}],"map":{}}"#, nil),
            (#"{"items":{},"map":{}}"#, nil),
            (#"[1]"#, nil),
        ]
        func describe(_ e: any Error) -> String {
            switch e as? DecodingError {
            case .keyNotFound(let k, let c)?: return "keyNotFound \(k.stringValue) at \(c.codingPath.map(\.stringValue))"
            case .valueNotFound(_, let c)?: return "valueNotFound at \(c.codingPath.map(\.stringValue))"
            case .typeMismatch(_, let c)?: return "typeMismatch at \(c.codingPath.map(\.stringValue))"
            case .dataCorrupted(let c)?: return "dataCorrupted at \(c.codingPath.map(\.stringValue))"
            default: return "\(e)"
            }
        }
        for (text, differs) in cases {
            var mine = "", foundation = ""
            XCTAssertThrowsError(try JSONValueDecoder.decode(Outer.self, from: try JSONValue.parse(text))) { mine = describe($0) }
            XCTAssertThrowsError(try JSONDecoder().decode(Outer.self, from: Data(text.utf8))) { foundation = describe($0) }
            XCTAssertEqual(mine, differs ?? foundation, text)
        }
    }
}
