// swift-tools-version:6.0
// A Hummingbird 2 server answering GET /health, the reference peer of bench/run-compare.sh.
// Its own package on purpose: it depends on Hummingbird only, never on the product, so the
// comparison measures two HTTP stacks doing the same small job (bench/README.md, "Peers").
import PackageDescription

let package = Package(
    name: "hummingbird-health",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
    ],
    targets: [
        .executableTarget(
            name: "hummingbird-health",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")],
            path: "Sources/HummingbirdHealth"
        ),
    ]
)
