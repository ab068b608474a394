import Foundation
import XCTest
@testable import TSJSON

/// `JSONValueEncoder` writes what Foundation's `JSONEncoder` writes (parsed back into a tree),
/// member order included, without bytes in between; `null` vs absent follows `encodeNil` vs
/// `encodeIfPresent`, and a ready-made tree (`JSONValueEncodable`, `JSONValue`) is taken as it is.
final class JSONValueEncoderTests: XCTestCase {
    struct Inner: Codable, Equatable {
        var label: String
        var weight: Double
    }

    struct Everything: Codable, Equatable {
        var text: String
        var int: Int
        var int8: Int8
        var int64: Int64
        var uint32: UInt32
        var uint64: UInt64
        var double: Double
        var float: Float
        var flag: Bool
        var missing: String?
        var present: Int?
        var inner: Inner
        var list: [Inner]
        var numbers: [Int]
        var nested: [[String]]
        var map: [String: Int]
        var tree: JSONValue
    }

    /// Encodes `nil` as an explicit `null` (what the hand-written trees did for every field).
    struct ExplicitNulls: Encodable {
        var a: String?
        var b: Int?
        enum CodingKeys: String, CodingKey { case a, b }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(a, forKey: .a)
            try c.encodeIfPresent(b, forKey: .b)
        }
    }

    /// Nested containers and a super encoder, mixed with plain members, in one order.
    struct Containers: Encodable {
        enum Keys: String, CodingKey { case first, object, array, base, last }
        enum Sub: String, CodingKey { case x, y }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(1, forKey: .first)
            var o = c.nestedContainer(keyedBy: Sub.self, forKey: .object)
            try o.encode("x", forKey: .x)
            var a = c.nestedUnkeyedContainer(forKey: .array)
            try a.encode(true)
            var inA = a.nestedContainer(keyedBy: Sub.self)
            try inA.encode(2.5, forKey: .y)
            try a.encodeNil()
            var sub = c.superEncoder(forKey: .base).singleValueContainer()
            try sub.encode("base")
            try o.encode(7, forKey: .y)  // after its siblings: still lands in its object
            try c.encode("end", forKey: .last)
        }
    }

    struct Model: JSONValueEncodable {
        var json: JSONValue { ["kept": "as is", "n": 1] }
    }

    /// Its `encode(to:)` fails: `JSONValueEncoder` must take `json` without calling it.
    struct TakenAsIs: JSONValueEncodable {
        var json: JSONValue { ["direct": true] }
        struct Walked: Error {}
        func encode(to encoder: any Encoder) throws { throw Walked() }
    }

    struct Holder: Encodable {
        var one: TakenAsIs
        var many: [TakenAsIs]
    }

    struct Wrapper: Encodable {
        var model: Model
        var models: [Model]
    }

    private static let sample = Everything(
        text: "é \"q\" \u{01}", int: -3, int8: -8, int64: Int64.max, uint32: 7, uint64: 9, double: 0.25, float: 1.5, flag: true,
        missing: nil, present: 4, inner: Inner(label: "in", weight: 2), list: [Inner(label: "a", weight: 1.25), Inner(label: "b", weight: -0.5)],
        numbers: [1, 2, 3], nested: [["a"], [], ["b", "c"]], map: ["only": 1], tree: ["z": [1, 2.5, nil, false], "a": ["b": "c"]])

    func testEncodesWhatJSONEncoderWritesMemberOrderIncluded() throws {
        let mine = try JSONValueEncoder.encode(Self.sample)
        XCTAssertEqual(Self.canonical(mine), try Self.foundation(Self.sample))
        XCTAssertEqual(mine.objectValue?.keys, ["text", "int", "int8", "int64", "uint32", "uint64", "double", "float", "flag", "present",
                                                "inner", "list", "numbers", "nested", "map", "tree"], "declaration order")
        XCTAssertEqual(mine["int64"], .int(Int64.max), "integers stay integers")
        XCTAssertEqual(mine["uint64"], .int(9))
        XCTAssertEqual(mine["double"], .double(0.25))
        XCTAssertEqual(mine["float"], .double(1.5))
        XCTAssertNil(mine["missing"], "encodeIfPresent(nil) leaves the member out")
        XCTAssertEqual(mine["present"], .int(4))
        XCTAssertEqual(mine["tree"]?.objectValue?.keys, ["z", "a"], "a JSONValue member keeps its order")
    }

    /// What `JSONEncoder` writes, parsed, in `canonical` form (it keeps no member order on Linux).
    private static func foundation<T: Encodable>(_ value: T) throws -> JSONValue {
        canonical(try JSONValue.parse(String(decoding: try JSONEncoder().encode(value), as: UTF8.self)))
    }

    /// Members sorted by key, and a whole double as the integer the text `2.0` → `2` parses back to.
    private static func canonical(_ v: JSONValue) -> JSONValue {
        switch v {
        case .double(let d) where d.rounded() == d && abs(d) < 1e15: return .int(Int64(d))
        case .array(let a): return .array(a.map(canonical))
        case .object(let o): return .object(JSONObject(o.pairs.sorted { $0.key < $1.key }.map { ($0.key, canonical($0.value)) }))
        default: return v
        }
    }

    func testNullIsExplicitOnlyWhenEncodedAsNil() throws {
        XCTAssertEqual(try JSONValueEncoder.encode(ExplicitNulls(a: nil, b: nil)).serializedString(), #"{"a":null}"#)
        XCTAssertEqual(try JSONValueEncoder.encode(ExplicitNulls(a: "x", b: 2)).serializedString(), #"{"a":"x","b":2}"#)
        XCTAssertEqual(try JSONValueEncoder.encode(Optional<Int>.none), .null)
    }

    func testNestedContainersAndSuperEncodersKeepTheirPlaces() throws {
        let v = try JSONValueEncoder.encode(Containers())
        XCTAssertEqual(v.serializedString(), #"{"first":1,"object":{"x":"x","y":7},"array":[true,{"y":2.5},null],"base":"base","last":"end"}"#)
        XCTAssertEqual(Self.canonical(v), try Self.foundation(Containers()))
    }

    func testReadyMadeTreesAreTakenAsTheyAre() throws {
        let v = try JSONValueEncoder.encode(Wrapper(model: Model(), models: [Model(), Model()]))
        XCTAssertEqual(v.serializedString(), #"{"model":{"kept":"as is","n":1},"models":[{"kept":"as is","n":1},{"kept":"as is","n":1}]}"#)
        XCTAssertEqual(try JSONValueEncoder.encode(Model()), Model().json)
        XCTAssertEqual(try JSONValueEncoder.encode(Holder(one: TakenAsIs(), many: [TakenAsIs()])),
                       ["one": ["direct": true], "many": [["direct": true]]], "a JSONValueEncodable is never walked")
        XCTAssertEqual(try JSONValueEncoder.encode(TakenAsIs()), ["direct": true])
        let tree: JSONValue = ["a": [1, "b"], "c": nil]
        XCTAssertEqual(try JSONValueEncoder.encode(tree), tree)
        XCTAssertEqual(try JSONValueEncoder.encode([tree, tree]), [tree, tree])
        // Through any other encoder the same tree comes out (`JSONValue.encode(to:)`).
        XCTAssertEqual(try Self.foundation(Wrapper(model: Model(), models: [])), Self.canonical(["model": ["kept": "as is", "n": 1], "models": []]))
    }

    func testValuesJSONCannotHoldAreErrorsWithTheirPath() throws {
        struct Big: Encodable { var n: UInt64 }
        XCTAssertThrowsError(try JSONValueEncoder.encode(["a": [Big(n: UInt64.max)]])) { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(context.codingPath.map(\.stringValue), ["a", "Index 0", "n"])
        }
        XCTAssertEqual(try JSONValueEncoder.encode(Big(n: UInt64(Int64.max))), ["n": .int(Int64.max)])
        struct Nothing: Encodable { func encode(to encoder: any Encoder) throws {} }
        XCTAssertThrowsError(try JSONValueEncoder.encode(Nothing()), "a top-level value that encodes nothing")
        XCTAssertEqual(try JSONValueEncoder.encode([Nothing()]), [[:]], "a nested one is {}, as in JSONEncoder")
    }
}
