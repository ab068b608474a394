import TSSync
import TSHTTP
import TSJSON

/// `GET /openapi.json`: the document of the routes actually registered. The router is frozen
/// after this handler is registered, so the table is handed over with `setRoutes` once the
/// router exists; the document is built once, on first request. `GET /asyncapi.json`: the
/// AsyncAPI document of the Socket.IO events (`AsyncAPIDocument`), which do not depend on the routes.
public final class OpenAPIRoutes: Sendable {
    let version: String
    private let state = LockedValue<(routes: [OpenAPIDocument.RouteKey], cached: [UInt8]?)>(([], nil))
    /// `/asyncapi.json`, built on first request.
    private let asyncAPI = LockedValue<[UInt8]?>(nil)

    public init(version: String) { self.version = version }

    /// Call once with `router.registeredRoutes` after `freeze()`.
    public func setRoutes(_ routes: [OpenAPIDocument.RouteKey]) {
        state.withLock { $0 = (routes, nil) }
    }

    public var document: JSONValue {
        OpenAPIDocument.build(routes: state.withLock { $0.routes }, version: version)
    }

    public func register(into router: inout RouterBuilder) {
        router.get("/openapi.json") { [self] _ in
            let bytes: [UInt8] = state.withLock { s in
                if let c = s.cached { return c }
                let b = OpenAPIDocument.build(routes: s.routes, version: version).serialized()
                s.cached = b
                return b
            }
            return .bytes(bytes, contentType: "application/json", headers: ["Access-Control-Allow-Origin": "*"])
        }
        router.get("/asyncapi.json") { [self] _ in
            let bytes: [UInt8] = asyncAPI.withLock { cached in
                if let cached { return cached }
                let b = AsyncAPIDocument.build(version: version).serialized()
                cached = b
                return b
            }
            return .bytes(bytes, contentType: "application/json", headers: ["Access-Control-Allow-Origin": "*"])
        }
    }
}
