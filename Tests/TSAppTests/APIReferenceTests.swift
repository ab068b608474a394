import Foundation
import TSHTTP
import TSJSON
@testable import TSRoutes
@testable import TSRealtime
import XCTest

/// docs/api.md, the app developer's reference, is checked against the server:
/// its REST part is generated from the catalog and schemas that build /openapi.json and that
/// validate requests (stale = failure), every registered route is in it, and so is every
/// Socket.IO event the server handles or emits.
final class APIReferenceTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var apiDoc: URL { root.appendingPathComponent("docs/api.md") }

    func text() throws -> String { try String(contentsOf: Self.apiDoc, encoding: .utf8) }

    func testRESTSectionIsGeneratedFromTheCatalog() throws {
        let doc = try text()
        guard let b = doc.range(of: APIReference.beginMarker), let e = doc.range(of: APIReference.endMarker), b.upperBound <= e.lowerBound else {
            return XCTFail("docs/api.md lacks the generated-section markers")
        }
        let expected = "\n\n" + APIReference.markdown() + "\n"
        let current = String(doc[b.upperBound..<e.lowerBound])
        if current != expected {
            if ProcessInfo.processInfo.environment["TOUCHSYNC_UPDATE_API_DOCS"] == "1" {
                try (String(doc[..<b.upperBound]) + expected + String(doc[e.lowerBound...])).write(to: Self.apiDoc, atomically: true, encoding: .utf8)
            } else {
                XCTFail("docs/api.md is stale: run `TOUCHSYNC_UPDATE_API_DOCS=1 swift test --filter APIReferenceTests` and commit it")
            }
        }
    }

    func testEveryRegisteredRouteAndSocketIOEventIsInTheReference() async throws {
        let live = try LiveServer(overrides: ["testMode": true])
        let routes = live.server.registeredRoutes
        let clientEvents = live.server.hub.eventNames
        await live.stop()
        let doc = try text()
        XCTAssertGreaterThan(routes.count, 30)
        for r in routes {
            XCTAssertTrue(doc.contains("`\(r.method) \(r.pattern)`"), "docs/api.md lacks `\(r.method) \(r.pattern)`")
        }
        XCTAssertGreaterThanOrEqual(clientEvents.count, 7)
        let socketPart = doc.range(of: "## Socket.IO").map { String(doc[$0.lowerBound...]) } ?? ""
        for e in clientEvents {
            XCTAssertTrue(socketPart.contains("| `\(e)` |"), "docs/api.md's Socket.IO section lacks the client event `\(e)`")
        }
        let emitted = try Self.serverEventNames()
        XCTAssertGreaterThanOrEqual(emitted.count, 10)
        for e in emitted where !clientEvents.contains(e) {
            XCTAssertTrue(socketPart.contains("| `\(e)` |"), "docs/api.md's Socket.IO section lacks the server event `\(e)`")
        }
        // The reference stands alone: nothing outside the repository.
        XCTAssertFalse(doc.contains(".." + "/shared"))
    }

    /// Event names the server emits: its server → client declarations (AsyncAPITests checks that
    /// every emitted event is declared).
    static func serverEventNames() throws -> Set<String> {
        Set(RealtimeEvents.all.filter { $0.direction == .serverToClient }.map(\.name))
    }
}
