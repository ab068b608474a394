// swift-tools-version:5.9
// The XCTest example of docs/exec.md as a package of its own, so that the documentation's test
// (conformance/test_docs_commands.py) compiles and runs it against `touchsync exec` on Linux.
import PackageDescription

let package = Package(
    name: "ExecExample",
    targets: [.testTarget(name: "ExecExampleTests", path: "Tests/ExecExampleTests")]
)
