// swift-tools-version:6.0
// TouchSync server. The target graph is the architecture, lowest layer first:
//   CSQLite, CCrypto, CSystem (system C libraries) -> TSJSON -> TSCrypto; TSStorage
//   TSSockets -> TSHTTP -> TSWebSocket -> TSEngineIO -> TSSocketIO (realtime transport stack)
//   CTLS (libssl, Linux only) -> TSTLS: a TSSockets ConnectionTransform (HTTPS/WSS), used by TSApp
//   TSStorage + TSCrypto -> TSDomain -> TSRoutes (REST + realtime bindings) -> TSApp -> touchsync
// A lower layer never imports a higher one.
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "touchsync",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "touchsync", targets: ["touchsync"]),
        .executable(name: "conformance-server", targets: ["conformance-server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // C shims over system libraries (GRDB-style [system] module maps).
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto", providers: [.apt(["libssl-dev"])]),
        // tls (issue 15): libssl, Linux only (the macOS SDK has no OpenSSL: there TSTLS builds without TLS).
        .systemLibrary(name: "CTLS", path: "Sources/CTLS", providers: [.apt(["libssl-dev"])]),
        // The OS layer's C half: the real <sys/epoll.h>, <sys/eventfd.h>, <sys/event.h>, <poll.h>,
        // socket headers, and wrappers for glibc's _GNU_SOURCE-only accept4/sched_getaffinity.
        .target(name: "CSystem", path: "Sources/CSystem"),

        // Foundation-free building blocks.
        .target(name: "TSSync", swiftSettings: strict),
        .target(name: "TSJSON", swiftSettings: strict),
        .target(name: "TSCrypto", dependencies: ["CCrypto", "TSJSON"], swiftSettings: strict),
        .target(name: "TSStorage", dependencies: ["CSQLite", "TSSync", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),

        // Transport stack.
        .target(name: "TSSockets", dependencies: ["TSSync", "CSystem", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        // tls (issue 15): TLS engine over memory BIOs + the TSSockets ConnectionTransform seam.
        .target(name: "TSTLS", dependencies: [.target(name: "CTLS", condition: .when(platforms: [.linux])), "TSSockets", "TSSync", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(name: "TSHTTP", dependencies: ["TSSockets", "TSJSON", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(name: "TSWebSocket", dependencies: ["TSSockets", "TSHTTP", "TSCrypto"], swiftSettings: strict),
        .target(name: "TSEngineIO", dependencies: ["TSSockets", "TSHTTP", "TSWebSocket", "TSJSON", "TSCrypto", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(name: "TSSocketIO", dependencies: ["TSEngineIO", "TSJSON", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),

        // TouchSync itself.
        .target(name: "TSDomain", dependencies: ["TSSync", "TSStorage", "TSCrypto", "TSJSON", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(name: "TSRoutes", dependencies: ["TSSync", "TSDomain", "TSHTTP", "TSSocketIO", "TSJSON", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(name: "TSApp", dependencies: ["TSTLS", "TSSync", "TSRoutes", "TSDomain", "TSHTTP", "TSSocketIO", "TSEngineIO", "TSStorage", "TSCrypto", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .executableTarget(name: "touchsync", dependencies: ["TSApp", "TSTLS", "TSSockets", .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .executableTarget(name: "touchsync-bench", dependencies: ["TSSockets", "TSJSON", "TSCrypto", .product(name: "ArgumentParser", package: "swift-argument-parser")], path: "bench/touchsync-bench", swiftSettings: strict),
        .executableTarget(name: "conformance-server", dependencies: ["TSSocketIO", "TSEngineIO", "TSWebSocket", "TSHTTP", "TSJSON", .product(name: "ArgumentParser", package: "swift-argument-parser"), .product(name: "Logging", package: "swift-log")], path: "Sources/conformance-server", swiftSettings: strict),

        // Tests, one target per layer, and the raw TCP/HTTP/WebSocket clients the live tests share.
        .target(name: "TSTestSupport", path: "Tests/TSTestSupport", swiftSettings: strict),
        .testTarget(name: "TSJSONTests", dependencies: ["TSJSON"], swiftSettings: strict),
        .testTarget(name: "TSCryptoTests", dependencies: ["TSCrypto"], swiftSettings: strict),
        .testTarget(name: "TSStorageTests", dependencies: ["TSStorage", "TSSync"], swiftSettings: strict),
        .testTarget(name: "TSSocketsTests", dependencies: ["TSSockets"], swiftSettings: strict),
        .testTarget(name: "TSHTTPTests", dependencies: ["TSHTTP", "TSSockets", "TSJSON"], swiftSettings: strict),
        .testTarget(name: "TSWebSocketTests", dependencies: ["TSWebSocket", "TSHTTP", "TSSockets", "TSTestSupport", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .testTarget(name: "TSEngineIOTests", dependencies: ["TSEngineIO", "TSHTTP", "TSJSON", "TSCrypto", "TSTestSupport"], swiftSettings: strict),
        .testTarget(name: "TSSocketIOTests", dependencies: ["TSSocketIO", "TSEngineIO", "TSJSON", "TSTestSupport"], swiftSettings: strict),
        .testTarget(name: "TSDomainTests", dependencies: ["TSDomain", "TSStorage", "TSCrypto", "TSJSON"], swiftSettings: strict),
        .testTarget(name: "TSTLSTests", dependencies: ["TSTLS", .target(name: "CTLS", condition: .when(platforms: [.linux])), "TSSockets", "TSHTTP", "TSTestSupport", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .testTarget(name: "TSAppTests", dependencies: ["TSApp", "TSRoutes", "TSDomain", "TSHTTP", "TSJSON", "TSCrypto", "TSTestSupport"], swiftSettings: strict),
    ]
)
