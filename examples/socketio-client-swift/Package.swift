// swift-tools-version:5.9
// The app's side of the wire, with the Socket.IO client iOS apps use: Socket.IO-Client-Swift.
// macOS/iOS only (it depends on Starscream and Apple's Foundation networking; there is no Linux
// port), so the release workflow's macOS job runs it against `touchsync serve --demo`; the Linux
// suite's real clients cover the same wire behaviour. Not part of the root
// package: `swift build` at the repository root never sees it.
import PackageDescription

let package = Package(
    name: "socketio-client-example",
    platforms: [.macOS(.v13)],
    // Named so `swift run … socketio-client-example` (the release workflow, README.md) finds it: an
    // executable target alone gets a product named after the target.
    products: [.executable(name: "socketio-client-example", targets: ["SocketIOClientExample"])],
    dependencies: [
        .package(url: "https://github.com/socketio/socket.io-client-swift", from: "16.1.0"),
    ],
    targets: [
        .executableTarget(name: "SocketIOClientExample", dependencies: [.product(name: "SocketIO", package: "socket.io-client-swift")]),
    ]
)
