import TSJSON
import XCTest
@testable import TSDomain
@testable import TSRealtime
@testable import TSRoutes

/// Each server payload's declared schema (`RealtimePayload.schema`, what `/asyncapi.json`
/// publishes) and its `Encodable` encoding (what the wire carries, `wireJSON`) describe the same
/// JSON, both ways: for every declared server event and every ack, the payload type's own
/// `example` (declared beside the type, published as the message's example) encodes exactly the
/// schema's top-level members and conforms to the whole schema (types, `$ref`s into the
/// components, no extra member anywhere). A `CodingKey` or property renamed on one side fails
/// here without a server; what a live server really sends is checked the same way by
/// TestModeTests+EventContract. A client payload's example must conform to its schema and decode.
extension AsyncAPITests {
    func testEveryServerPayloadEncodesExactlyItsDeclaredSchema() throws {
        let doc = AsyncAPIDocument.build(version: "test")
        let validator = JSONSchemaValidator(document: doc)
        var checked = 0
        for d in Self.declared {
            switch d.direction {
            case .serverToClient:
                for p in Self.encodingMismatches(d.payloadExample, schema: d.payload, validator: validator, what: "\(d.name) payload's example") { XCTFail(p) }
            case .clientToServer:
                let ack = try XCTUnwrap(d.ack, d.name), ackExample = try XCTUnwrap(d.ackExample, d.name)
                for p in Self.encodingMismatches(ackExample, schema: ack, validator: validator, what: "\(d.name) ack's example") { XCTFail(p) }
                let problems = validator.validate(d.payloadExample, against: d.payload)
                XCTAssertEqual(problems, [], "\(d.name) payload's example does not conform to its schema")
                XCTAssertNoThrow(try XCTUnwrap(d.decodesExample, d.name)(), "\(d.name) payload's example is refused by its handler's decoding")
            }
            checked += 1
        }
        XCTAssertEqual(checked, RealtimeEvents.all.count)
        XCTAssertGreaterThanOrEqual(checked, 19)

        // The check can fail: a renamed member, a missing one and one of the wrong type are each reported.
        let cleared = try XCTUnwrap(RealtimeEvents.roomCleared.declaration.payloadExample.objectValue)
        let schema = RealtimeEvents.roomCleared.declaration.payload
        var renamed = JSONObject(cleared.pairs.map { ($0.key == "clearedBy" ? "clearer" : $0.key, $0.value) })
        XCTAssertEqual(Self.encodingMismatches(.object(renamed), schema: schema, validator: validator, what: "room:cleared payload"), [
            "room:cleared payload encodes the members [clearer, roomId] but its schema declares [clearedBy, roomId]",
            "room:cleared payload does not conform to its schema: $: missing required clearedBy; $: unexpected property clearer",
        ])
        renamed["clearer"] = nil
        XCTAssertEqual(Self.encodingMismatches(.object(renamed), schema: schema, validator: validator, what: "x").count, 2)
        var mistyped = cleared
        mistyped["clearedBy"] = 7
        XCTAssertEqual(Self.encodingMismatches(.object(mistyped), schema: schema, validator: validator, what: "x"),
                       ["x does not conform to its schema: $.clearedBy: expected string, got 7"])
    }

    /// `/asyncapi.json` carries each message's example: the payload type's `example` as encoded.
    func testEveryMessagePublishesItsDeclaredExample() throws {
        let messages = try XCTUnwrap(AsyncAPIDocument.build(version: "test")["components"]?["messages"]?.objectValue)
        for d in Self.declared {
            let key = AsyncAPIDocument.key(d.name)
            XCTAssertEqual(messages[key]?["examples"], [.object(["payload": d.payloadExample])], key)
            if let ackExample = d.ackExample {
                XCTAssertEqual(messages[key + ".ack"]?["examples"], [.object(["payload": ackExample])], key + ".ack")
            }
        }
    }

    /// How an encoded payload and its schema disagree: its top-level members against the
    /// schema's properties (both ways), then the whole value against the schema.
    static func encodingMismatches(_ encoded: JSONValue, schema: JSONValue, validator: JSONSchemaValidator, what: String) -> [String] {
        var out: [String] = []
        let target = schema["$ref"]?.stringValue.flatMap { resolve($0, in: validator.document) } ?? schema
        if let declared = target["properties"]?.objectValue?.keys {
            let members = encoded.objectValue?.keys ?? []
            if Set(members) != Set(declared) {
                out.append("\(what) encodes the members [\(members.sorted().joined(separator: ", "))] but its schema declares [\(declared.sorted().joined(separator: ", "))]")
            }
        }
        let problems = validator.validate(encoded, against: schema)
        if !problems.isEmpty { out.append("\(what) does not conform to its schema: \(problems.joined(separator: "; "))") }
        return out
    }
}
