import Foundation
import TSJSON
@testable import TSRoutes
@testable import TSRealtime
import XCTest

/// The Socket.IO events are declared once (`RealtimeEvents`): the handlers the hub has, the
/// tables of docs/api.md and `/asyncapi.json` must all agree with the declarations, both ways.
/// The payloads actually emitted are checked against the same declarations in
/// TestModeTests+EventContract, the kit's models in TouchSyncTestingTests/EventModelDriftTests.
final class AsyncAPITests: XCTestCase {
    static var declared: [RealtimeEventDeclaration] { RealtimeEvents.all }
    static func names(_ direction: RealtimeEventDeclaration.Direction) -> Set<String> {
        Set(declared.filter { $0.direction == direction }.map(\.name))
    }

    func testEveryHandlerIsDeclaredAndEveryClientEventHasAHandler() async throws {
        let live = try LiveServer(overrides: ["testMode": true])
        let handled = Set(live.server.hub.eventNames)
        await live.stop()
        XCTAssertEqual(Self.names(.clientToServer).count, 7)
        XCTAssertEqual(Self.names(.serverToClient).count, 12)
        for name in handled.subtracting(Self.names(.clientToServer)).sorted() {
            XCTFail("the hub handles \(name), which RealtimeEvents does not declare: register handlers from declarations")
        }
        for name in Self.names(.clientToServer).subtracting(handled).sorted() {
            XCTFail("RealtimeEvents declares the client event \(name) but the hub has no handler for it")
        }
        XCTAssertEqual(Set(Self.declared.map(\.name)).count, Self.declared.count, "an event is declared twice")
    }

    /// docs/api.md "Socket.IO": one row per declared event in the table of its direction, and
    /// each row's payload (and ack) names exactly the top-level fields of the declared schema.
    func testDocsAPITablesMatchTheDeclarations() throws {
        let doc = try String(contentsOf: APIReferenceTests.apiDoc, encoding: .utf8)
        XCTAssertTrue(doc.contains("`GET /asyncapi.json`"), "docs/api.md does not link /asyncapi.json")
        let clientRows = try Self.tableRows(doc, heading: "### Client → server")
        let serverRows = try Self.tableRows(doc, heading: "### Server → client")
        let problems = Self.disagreements(clientRows: clientRows, serverRows: serverRows, declared: Self.declared)
        for p in problems { XCTFail(p) }

        // The check can fail: a renamed field, a missing row and an undeclared row are each reported.
        var renamed = serverRows
        renamed["element:deleted"]?[0] = "`{elementID, roomId}`"
        var missing = clientRows
        missing["room:leave"] = nil
        var extra = serverRows
        extra["element:moved"] = ["`{elementId}`", "an element moved"]
        XCTAssertEqual(Self.disagreements(clientRows: clientRows, serverRows: renamed, declared: Self.declared),
                       ["docs/api.md element:deleted payload names [elementID, roomId] but the declaration has [elementId, roomId]"])
        XCTAssertEqual(Self.disagreements(clientRows: missing, serverRows: serverRows, declared: Self.declared),
                       ["RealtimeEvents declares the client → server event room:leave, missing from docs/api.md's table"])
        XCTAssertEqual(Self.disagreements(clientRows: clientRows, serverRows: extra, declared: Self.declared),
                       ["docs/api.md lists the server → client event element:moved, which RealtimeEvents does not declare"])
    }

    func testServedDocumentIsGeneratedFromTheDeclarationsAndEveryReferenceResolves() async throws {
        let live = try LiveServer()
        let r = try await APIClient(base: live.base).get("/asyncapi.json")
        await live.stop()
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.header("Content-Type"), "application/json")
        let doc = r.json
        XCTAssertEqual(doc["asyncapi"], "3.0.0")
        // Through the wire's bytes: an example's whole Double (`340.0`) is written `340`, read back as an integer.
        let built = try JSONValue.parse(AsyncAPIDocument.build(version: "x").serialized())
        XCTAssertEqual(doc["components"], built["components"])

        var refs: [String] = []
        func collect(_ v: JSONValue) {
            if let o = v.objectValue {
                for (k, x) in o.pairs { if k == "$ref", let s = x.stringValue { refs.append(s) } else { collect(x) } }
            } else if let a = v.arrayValue { a.forEach(collect) }
        }
        collect(doc)
        XCTAssertGreaterThan(refs.count, 40)
        for ref in Set(refs).sorted() {
            XCTAssertNotNil(Self.resolve(ref, in: doc), "\(ref) does not resolve in /asyncapi.json")
        }
        // One message per event named as on the wire, each in an operation of the right action.
        var byName: [String: String] = [:]
        for (_, op) in doc["operations"]?.objectValue ?? JSONObject() {
            for m in op["messages"]?.arrayValue ?? [] {
                let message = Self.resolve(m["$ref"]?.stringValue ?? "", in: doc).flatMap { Self.resolve($0["$ref"]?.stringValue ?? "", in: doc) }
                if let name = message?["name"]?.stringValue { byName[name] = op["action"]?.stringValue }
            }
        }
        for d in Self.declared {
            XCTAssertEqual(byName[d.name], d.direction == .clientToServer ? "receive" : "send", d.name)
        }
        XCTAssertEqual(Set(byName.keys), Set(Self.declared.map(\.name)))
    }

    // MARK: helpers

    /// A local JSON pointer (`#/a/b`) in `doc`.
    static func resolve(_ ref: String, in doc: JSONValue) -> JSONValue? {
        guard ref.hasPrefix("#/") else { return nil }
        var v: JSONValue? = doc
        for part in ref.dropFirst(2).split(separator: "/") { v = v?[String(part).replacingOccurrences(of: "~1", with: "/")] }
        return v
    }

    /// The rows of the first table under `heading`: event name → the other cells.
    static func tableRows(_ doc: String, heading: String) throws -> [String: [String]] {
        let section = try XCTUnwrap(doc.range(of: "## Socket.IO").map { doc[$0.upperBound...] }, "docs/api.md has no Socket.IO section")
        let start = try XCTUnwrap(section.range(of: heading), "docs/api.md lacks \(heading)")
        var rows: [String: [String]] = [:]
        var inTable = false
        for line in section[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") { break }
            guard line.hasPrefix("|") else {
                if inTable { break } else { continue }
            }
            inTable = true
            let cells = line.dropFirst().dropLast().split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = cells.first, first.hasPrefix("`"), first.hasSuffix("`") else { continue }
            rows[String(first.dropFirst().dropLast())] = Array(cells.dropFirst())
        }
        return rows
    }

    /// Everything on which the tables and the declarations disagree, one line each.
    static func disagreements(clientRows: [String: [String]], serverRows: [String: [String]], declared: [RealtimeEventDeclaration]) -> [String] {
        var out: [String] = []
        for (rows, direction, label) in [(clientRows, RealtimeEventDeclaration.Direction.clientToServer, "client → server"),
                                         (serverRows, .serverToClient, "server → client")] {
            let mine = declared.filter { $0.direction == direction }
            for name in Set(rows.keys).subtracting(mine.map(\.name)).sorted() {
                out.append("docs/api.md lists the \(label) event \(name), which RealtimeEvents does not declare")
            }
            for d in mine {
                guard let cells = rows[d.name] else {
                    out.append("RealtimeEvents declares the \(label) event \(d.name), missing from docs/api.md's table")
                    continue
                }
                if let problem = fieldMismatch(cell: cells.first ?? "", schema: d.payload, what: "\(d.name) payload") { out.append(problem) }
                if let ack = d.ack, let problem = fieldMismatch(cell: cells.count > 1 ? cells[1] : "", schema: ack, what: "\(d.name) ack") {
                    out.append(problem)
                }
            }
        }
        return out
    }

    /// The cell's `{a, b: T}` (plus the properties of a schema it names after "fields of") against
    /// the schema's properties; a cell that only names a schema must be a reference to it.
    static func fieldMismatch(cell: String, schema: JSONValue, what: String) -> String? {
        let components = OpenAPIComponents.schemas
        let ref = schema["$ref"]?.stringValue.map { String($0.split(separator: "/").last ?? "") }
        guard let open = cell.firstIndex(of: "{") else {
            guard let ref, cell.contains("`\(ref)`") else { return "docs/api.md \(what) is \(cell), but the declaration is \(schema.serializedString())" }
            return nil
        }
        var depth = 0
        var close = open
        for i in cell[open...].indices {
            if cell[i] == "{" { depth += 1 } else if cell[i] == "}" { depth -= 1; if depth == 0 { close = i; break } }
        }
        var documented = cell[cell.index(after: open)..<close].split(separator: ",").map {
            String($0.split(separator: ":").first ?? "").trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty && $0 != "…" }
        if let r = cell.range(of: "fields of `") {
            let name = String(cell[r.upperBound...].prefix { $0 != "`" })
            if let keys = components[name]?["properties"]?.objectValue?.keys { documented += Array(keys) }
        }
        let target = ref.flatMap { components[$0] } ?? schema
        var declared: [String] = []
        if let keys = target["properties"]?.objectValue?.keys { declared = Array(keys) }
        guard Set(documented) != Set(declared) else { return nil }
        return "docs/api.md \(what) names [\(documented.joined(separator: ", "))] but the declaration has [\(declared.joined(separator: ", "))]"
    }
}
