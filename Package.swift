// swift-tools-version:6.0
// TouchSync server. The target graph is the architecture, lowest layer first:
//   CSQLite, CCrypto, CSystem (system C libraries) -> TSSync; TSJSON -> TSCrypto; TSStorage
//   TSSockets -> TSHTTP -> TSWebSocket -> TSEngineIO -> TSSocketIO (realtime transport stack)
//   TSSockets -> TSRedis (RESP2 client: pub/sub, streams, commands; used by TSRealtime)
//   CTLS (libssl, Linux only) -> TSTLS: a TSSockets ConnectionTransform (HTTPS/WSS), used by TSApp
//   TSStorage + TSCrypto -> TSDomain -> TSAPNs
//   TSDomain -> TSContract (schemas, error mapping, bearer token, metrics text: shared by REST and Socket.IO)
//   TSDomain + TSSocketIO + TSRedis + TSContract -> TSRealtime (broadcaster, recovery, event log,
//     event declarations and handlers, Redis bridge and session mirror)
//   TSRealtime + TSHTTP + TSContract -> TSRoutes (REST routes, pipeline, OpenAPI/AsyncAPI documents, metrics)
//     -> TSTestMode (/api/test/*, fixtures, data sets) -> TSInspector (the live inspector)
//     -> TSApp (composition, settings) -> touchsync
// A lower layer never imports a higher one.
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "touchsync",
    // macOS 15: the code uses Swift 6.0 runtime APIs that Apple ships from macOS 15 on (task
    // executors, `String(validating:as:)`, `Atomic`, `Int128`), and Xcode 26 (Swift 6.2,
    // which the dependencies need) runs only on macOS 15.6 or later anyway (README "macOS";
    // scripts/check-availability holds the code to this floor).
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "touchsync", targets: ["touchsync"]),
        .executable(name: "conformance-server", targets: ["conformance-server"]),
        // For an app's XCTest target: drives a test-mode server over HTTP (docs/testing-ios.md). Static, so
        // `swift build --product TouchSyncTesting` builds that target alone (an automatic library cannot be named).
        .library(name: "TouchSyncTesting", type: .static, targets: ["TouchSyncTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // C shims over system libraries (GRDB-style [system] module maps).
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto", providers: [.apt(["libssl-dev"])]),
        // TLS: libssl, Linux only (the macOS SDK has no OpenSSL: there TSTLS builds without TLS).
        .systemLibrary(name: "CTLS", path: "Sources/CTLS", providers: [.apt(["libssl-dev"])]),
        // The OS layer's C half: the real <sys/epoll.h>, <sys/eventfd.h>, <sys/event.h>, <poll.h>,
        // socket headers, and wrappers for glibc's _GNU_SOURCE-only accept4/sched_getaffinity.
        .target(name: "CSystem", path: "Sources/CSystem"),
        // libcurl with nghttp2 (HTTP/2) for the APNs provider; the macOS SDK ships it.
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // libpq for the PostgreSQL backend, Linux only (a Mac build needs no libpq;
        // there TSStorage builds SQLite-only and a postgres:// URL is refused at start-up).
        .systemLibrary(name: "CPostgres", path: "Sources/CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),

        // Foundation-free building blocks.
        .target(name: "TSSync", dependencies: ["CSystem"], swiftSettings: strict),
        .target(name: "TSJSON", swiftSettings: strict),
        .target(name: "TSCrypto", dependencies: ["CCrypto", "TSJSON"], swiftSettings: strict,
                // libcrypto on Linux only: on Darwin the CCrypto shim uses CommonCrypto (libSystem).
                linkerSettings: [.linkedLibrary("crypto", .when(platforms: [.linux]))]),
        .target(name: "TSStorage", dependencies: ["CSQLite", .target(name: "CPostgres", condition: .when(platforms: [.linux])), "TSSync", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),

        // Transport stack.
        .target(name: "TSSockets", dependencies: ["TSSync", "CSystem", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        // TLS engine over memory BIOs + the TSSockets ConnectionTransform seam.
        .target(name: "TSTLS", dependencies: [.target(name: "CTLS", condition: .when(platforms: [.linux])), "TSSockets", "TSSync", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(name: "TSHTTP", dependencies: ["TSSockets", "TSJSON", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(name: "TSWebSocket", dependencies: ["TSSockets", "TSHTTP", "TSCrypto"], swiftSettings: strict),
        .target(name: "TSEngineIO", dependencies: ["TSSockets", "TSHTTP", "TSWebSocket", "TSJSON", "TSCrypto", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(name: "TSSocketIO", dependencies: ["TSEngineIO", "TSJSON", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        // Redis: our own RESP2 client (pub/sub) on a TSSockets event loop.
        .target(name: "TSRedis", dependencies: ["TSSockets", "TSSync", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),

        // TouchSync itself.
        .target(name: "TSDomain", dependencies: ["TSSync", "TSStorage", "TSCrypto", "TSJSON", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        // APNs push delivery (token auth, HTTP/2 through libcurl); off unless configured.
        .target(name: "TSAPNs", dependencies: ["CCurl", "CCrypto", "TSCrypto", "TSSync", "TSDomain", "TSStorage", "TSJSON", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        // What REST and Socket.IO both speak: JSON Schema builders and the element's field schemas
        // (/openapi.json and /asyncapi.json), the error mapping, the bearer token, the metrics text format.
        .target(name: "TSContract", dependencies: ["TSJSON", "TSDomain", "TSStorage"], swiftSettings: strict),
        // Realtime between the domain and Socket.IO's users: broadcaster, recovery, event log, the event
        // declarations and their handlers, the Redis bridge and session mirror.
        .target(name: "TSRealtime", dependencies: ["TSSync", "TSSockets", "TSJSON", "TSStorage", "TSDomain", "TSSocketIO", "TSRedis", "TSContract", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(name: "TSRoutes", dependencies: ["TSSync", "TSSockets", "TSDomain", "TSHTTP", "TSSocketIO", "TSJSON", "TSContract", "TSRealtime", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        // Test mode's routes (/api/test/*: reset, fixtures, clock, faults, event waits) and the data set tools.
        .target(name: "TSTestMode", dependencies: ["TSSync", "TSSockets", "TSJSON", "TSStorage", "TSDomain", "TSHTTP", "TSEngineIO", "TSSocketIO", "TSContract", "TSRealtime", "TSRoutes", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        // The live inspector: its page, data, request log and access rule.
        .target(name: "TSInspector", dependencies: ["TSSync", "TSSockets", "TSJSON", "TSStorage", "TSDomain", "TSHTTP", "TSSocketIO", "TSContract", "TSRealtime", "TSRoutes", "TSTestMode", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(name: "TSApp", dependencies: ["TSRedis", "TSTLS", "TSSync", "TSContract", "TSRealtime", "TSRoutes", "TSTestMode", "TSInspector", "TSAPNs", "TSDomain", "TSHTTP", "TSSocketIO", "TSEngineIO", "TSStorage", "TSCrypto", .product(name: "Logging", package: "swift-log")], swiftSettings: strict,
                plugins: ["EmbedMigrations"]),
        // Migrations/ compiled into TSApp at build time (`EmbeddedMigrations`), so touchsync runs from any directory.
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["embed-migrations"], path: "Plugins/EmbedMigrations"),
        .executableTarget(name: "embed-migrations", path: "Sources/embed-migrations", swiftSettings: strict),
        .executableTarget(name: "touchsync", dependencies: ["TSApp", "TSRoutes", "TSTestMode", "TSTLS", "TSSockets", "TSSync", .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .executableTarget(name: "touchsync-bench", dependencies: ["TSSockets", "TSJSON", "TSCrypto", .product(name: "ArgumentParser", package: "swift-argument-parser")], path: "bench/touchsync-bench", swiftSettings: strict),
        // Database throughput on SQLite vs PostgreSQL (bench/RESULTS.md).
        .executableTarget(name: "storage-bench", dependencies: ["TSStorage"], path: "bench/storage-bench", swiftSettings: strict),
        .executableTarget(name: "conformance-server", dependencies: ["TSTLS", "TSSocketIO", "TSEngineIO", "TSWebSocket", "TSHTTP", "TSJSON", .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "Logging", package: "swift-log")], path: "Sources/conformance-server", swiftSettings: strict),

        // The app-facing test kit: Foundation only, no dependency on any target above, so an iOS
        // test target that adds it builds nothing of the server.
        .target(name: "TouchSyncTesting", swiftSettings: strict),

        // Tests, one target per layer, and the raw TCP/HTTP/WebSocket clients the live tests share.
        .target(name: "TSTestSupport", dependencies: ["TSSockets", "TSHTTP", "TSEngineIO", "TSSocketIO", "TSJSON", .product(name: "Logging", package: "swift-log")],
                path: "Tests/TSTestSupport", swiftSettings: strict),
        // A fresh PostgreSQL database (or SQLite file) per test, for every test target that needs storage.
        .target(name: "TSStorageTestSupport", dependencies: ["TSStorage"], path: "Tests/TSStorageTestSupport", swiftSettings: strict),
        .testTarget(name: "TSJSONTests", dependencies: ["TSJSON"], swiftSettings: strict),
        .testTarget(name: "TSCryptoTests", dependencies: ["TSCrypto"], swiftSettings: strict),
        .testTarget(name: "TSStorageTests", dependencies: ["TSStorage", "TSSync", "TSStorageTestSupport", "TSTestSupport"], swiftSettings: strict),
        .testTarget(name: "TSSocketsTests", dependencies: ["TSSockets", "TSTestSupport"], swiftSettings: strict),  // uring: TSTestSupport for SendRingTests
        .testTarget(name: "TSHTTPTests", dependencies: ["TSHTTP", "TSSockets", "TSJSON", "TSTestSupport"], swiftSettings: strict),
        .testTarget(name: "TSWebSocketTests", dependencies: ["TSWebSocket", "TSHTTP", "TSSockets", "TSTestSupport", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .testTarget(name: "TSEngineIOTests", dependencies: ["TSEngineIO", "TSHTTP", "TSJSON", "TSCrypto", "TSTestSupport"], swiftSettings: strict),
        .testTarget(name: "TSSocketIOTests", dependencies: ["TSSocketIO", "TSEngineIO", "TSJSON", "TSTestSupport"], swiftSettings: strict),
        .testTarget(name: "TSDomainTests", dependencies: ["TSDomain", "TSStorage", "TSCrypto", "TSJSON", "TSStorageTestSupport", "TSTestSupport"], swiftSettings: strict),
        .testTarget(name: "TSAPNsTests", dependencies: ["TSAPNs", "CCrypto", "TSCrypto", "TSJSON"], swiftSettings: strict),
        .testTarget(name: "TSTLSTests", dependencies: ["TSTLS", .target(name: "CTLS", condition: .when(platforms: [.linux])), "TSSockets", "TSHTTP", "TSTestSupport", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .testTarget(name: "TSRedisTests", dependencies: ["TSRedis", "TSSockets", "TSTestSupport", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        // Runs the built `touchsync` binary as a child process: the kit is tested exactly as an app uses it.
        .testTarget(name: "TouchSyncTestingTests", dependencies: ["TouchSyncTesting"], swiftSettings: strict),
        .testTarget(name: "TSContractTests", dependencies: ["TSContract"], swiftSettings: strict),
        .testTarget(name: "TSRealtimeTests", dependencies: ["TSRealtime", "TSDomain", "TSJSON", "TSRedis", "TSSocketIO", "TSSockets", "TSTestSupport", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .testTarget(name: "TSAppTests", dependencies: ["TSRedis", "TSApp", "TSContract", "TSRealtime", "TSRoutes", "TSTestMode", "TSInspector", "TSDomain", "TSHTTP", "TSJSON", "TSCrypto", "TSTestSupport", "TSStorageTestSupport"], swiftSettings: strict),
    ]
)

// libFuzzer targets, one per parser/codec (fuzz/README.md). Their entry point is
// `LLVMFuzzerTestOneInput` with no `main` (libFuzzer's), so they exist only in fuzz builds:
// fuzz/run.sh sets TOUCHSYNC_FUZZ=1 and builds them with `--sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address` into .build-fuzz.
if Context.environment["TOUCHSYNC_FUZZ"] == "1" {
    let fuzzTargets: [(String, [Target.Dependency])] = [
        ("fuzz-json", ["TSJSON"]),
        ("fuzz-http", ["TSHTTP"]),
        ("fuzz-websocket", ["TSWebSocket"]),
        ("fuzz-engineio", ["TSEngineIO"]),
        ("fuzz-socketio", ["TSSocketIO", "TSJSON"]),
        ("fuzz-redis", ["TSRedis"]),  // the RESP2 reply decoder
    ]
    for (name, dependencies) in fuzzTargets {
        let dir = String(name.dropFirst("fuzz-".count))
        package.targets.append(.executableTarget(name: name, dependencies: dependencies, path: "fuzz/\(dir)", swiftSettings: strict))
    }
    // A fuzz build holds only the fuzz targets and what they depend on, so one `swift build` (no
    // --product) builds all six with the sanitizers and nothing else (fuzz/run.sh).
    var needed = Set(fuzzTargets.map(\.0))
    var grew = true
    while grew {
        grew = false
        for target in package.targets where needed.contains(target.name) {
            for dependency in target.dependencies {
                switch dependency {
                case .targetItem(let name, _), .byNameItem(let name, _):
                    if needed.insert(name).inserted { grew = true }
                default:
                    break
                }
            }
        }
    }
    package.targets = package.targets.filter { needed.contains($0.name) }
    package.products = fuzzTargets.map { .executable(name: $0.0, targets: [$0.0]) }
}
