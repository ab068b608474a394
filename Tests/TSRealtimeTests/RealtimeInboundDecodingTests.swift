import TSJSON
import XCTest
@testable import TSDomain
@testable import TSRealtime

/// The client payloads are `Decodable` (`RealtimeInbound.decode`, over `JSONValueDecoder`), and
/// refuse exactly what the REST checks (`Input`) refuse, with the same `VALIDATION_ERROR` field
/// and message: each payload type is read here both ways, from the same values, and the two must
/// agree on every one (the members read in the same order, so the same first fault is named).
final class RealtimeInboundDecodingTests: XCTestCase {
    /// What a read gives: the members it kept, or its error.
    enum Outcome: Equatable {
        case read(JSONObject)
        case refused(DomainError)
    }

    /// Each type with the `Input` reads its handler made before it was `Decodable`.
    static let types: [(String, @Sendable (JSONValue) throws -> JSONObject, @Sendable (Input) throws -> JSONObject)] = [
        ("RoomRequest", { let r = try RoomRequest.decode($0); return ["roomId": .string(r.roomId)] },
         { ["roomId": .string(try $0.string("roomId", maxLength: 64))] }),
        ("ElementRequest", { let r = try ElementRequest.decode($0); return ["roomId": .string(r.roomId), "elementId": .string(r.elementId)] },
         { i in
             let room = try i.string("roomId", maxLength: 64)
             return ["roomId": .string(room), "elementId": .string(try i.string("elementId", maxLength: 64))]
         }),
        ("ElementDeleteRequest", { let r = try ElementDeleteRequest.decode($0); return ["elementId": .string(r.elementId), "roomId": .string(r.roomId)] },
         { i in
             let element = try i.string("elementId", maxLength: 64)
             return ["elementId": .string(element), "roomId": .string(try i.string("roomId", maxLength: 64))]
         }),
        ("ElementCreateRequest", { let r = try ElementCreateRequest.decode($0); return ["roomId": .string(r.roomId), "fields": .object(r.fields.object)] },
         { i in ["roomId": .string(try i.string("roomId", maxLength: 64)), "fields": .object(i.object)] }),
        ("ElementUpdateRequest", { r in
            let u = try ElementUpdateRequest.decode(r)
            return ["roomId": .string(u.roomId), "elementId": .string(u.elementId), "changes": .object(u.changes.object)]
        }, { i in
            let room = try i.string("roomId", maxLength: 64)
            let element = try i.string("elementId", maxLength: 64)
            return ["roomId": .string(room), "elementId": .string(element),
                    "changes": .object(JSONObject(i.object.pairs.filter { $0.key != "roomId" && $0.key != "elementId" }.map { ($0.key, $0.value) }))]
        }),
    ]

    static let payloads: [JSONValue] = {
        let ids: [JSONValue] = [nil, 5, 2.5, true, "", "r1", ["a"], ["a": 1], .string(String(repeating: "a", count: 64)),
                                .string(String(repeating: "a", count: 65)), .string(String(repeating: "é", count: 64)),
                                .string(String(repeating: "e\u{301}", count: 33)), "  "]
        var out: [JSONValue] = [[:], ["other": 1]]
        for id in ids {
            out.append(["roomId": id])
            out.append(["elementId": id])
            out.append(["roomId": id, "elementId": "e1"])
            out.append(["roomId": "r1", "elementId": id])
            out.append(["elementId": id, "roomId": id, "content": "x", "positionX": 2])
        }
        out.append(["roomId": "r1", "elementId": "e1", "type": "note", "positionX": 1, "extra": ["kept": [1, nil]]])
        return out
    }()

    static func outcome(_ body: () throws -> JSONObject) -> Outcome {
        do { return .read(try body()) } catch let e as DomainError { return .refused(e) } catch { return .refused(.conflict("\(error)")) }
    }

    func testEveryPayloadTypeRefusesWhatTheRESTChecksRefuseWithTheSameFieldAndMessage() throws {
        var refusals = Set<String>()
        for (name, decoded, reference) in Self.types {
            for payload in Self.payloads {
                let mine = Self.outcome { try decoded(payload) }
                let before = Self.outcome { try reference(try Input(value: payload)) }
                XCTAssertEqual(mine, before, "\(name) \(payload.serializedString())")
                if case .refused(let e) = mine { refusals.insert(e.message.replacingOccurrences(of: "elementId", with: "roomId")) }
            }
        }
        // The fixtures reach every check.
        XCTAssertEqual(refusals, ["roomId: is required", "roomId: must be a string", "roomId: must not be empty",
                                  "roomId: must be at most 64 characters"])
    }

    func testTheErrorOfAnyDecodingFailureNamesItsField() {
        struct Nested: Decodable { var a: [Inner]; struct Inner: Decodable { var n: Int; var on: Bool } }
        func refusal(_ v: JSONValue) -> DomainError? {
            do { _ = try JSONValueDecoder.decode(Nested.self, from: v); return nil } catch let e as DecodingError { return DomainError(decoding: e) } catch { return nil }
        }
        XCTAssertEqual(refusal(["a": [["n": 1, "on": true], ["n": 1.5, "on": true]]]),
                       .validation(field: "a.1.n", message: "1.5 does not fit Int"))
        XCTAssertEqual(refusal(["a": [["n": 1, "on": 1]]]), .validation(field: "a.0.on", message: "must be a boolean"))
        XCTAssertEqual(refusal(["a": [["on": true]]]), .validation(field: "a.0.n", message: "is required"))
        XCTAssertEqual(refusal(["a": "x"]), .validation(field: "a", message: "must be an array"))
        XCTAssertEqual(refusal(["a": [["n": "1", "on": true]]]), .validation(field: "a.0.n", message: "must be an integer"))
        XCTAssertEqual(refusal([1]), .validation(field: "payload", message: "must be an object"))
    }
}
