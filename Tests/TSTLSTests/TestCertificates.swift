import Foundation
import XCTest

/// Certificates made by the test through the `openssl` CLI in a fresh temporary directory: a CA
/// and server pairs signed by it for `localhost` / 127.0.0.1. Tests skip visibly without the CLI.
final class TestCertificates {
    let directory: String
    var caFile: String { directory + "/ca.pem" }
    private var caKey: String { directory + "/ca.key" }

    static func openssl() -> String? {
        for path in ["/usr/bin/openssl", "/usr/local/bin/openssl", "/opt/homebrew/bin/openssl"] where FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        return nil
    }

    /// Makes the CA; throws XCTSkip when the `openssl` CLI is missing.
    init() throws {
        guard Self.openssl() != nil else { throw XCTSkip("the openssl CLI is not installed: TLS tests need it to generate certificates") }
        directory = NSTemporaryDirectory() + "touchsync-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                 "-keyout", caKey, "-out", caFile, "-days", "2", "-subj", "/CN=TouchSync Test CA",
                 "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// A server certificate (chain: leaf) and key for `commonName`, SANs localhost + 127.0.0.1.
    /// Returns (certificate, key) paths.
    @discardableResult
    func makeServerPair(name: String, commonName: String = "localhost") throws -> (cert: String, key: String) {
        let key = directory + "/\(name).key", csr = directory + "/\(name).csr", cert = directory + "/\(name).pem"
        let ext = directory + "/\(name).ext"
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n"
            .write(toFile: ext, atomically: true, encoding: .utf8)
        try run(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", csr,
                 "-subj", "/CN=\(commonName)"])
        try run(["x509", "-req", "-in", csr, "-CA", caFile, "-CAkey", caKey, "-CAcreateserial", "-out", cert,
                 "-days", "2", "-extfile", ext])
        return (cert, key)
    }

    private func run(_ arguments: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.openssl()!)
        p.arguments = arguments
        p.standardOutput = FileHandle.nullDevice
        let err = Pipe()
        p.standardError = err
        try p.run()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        if p.terminationStatus != 0 {
            throw NSError(domain: "openssl", code: Int(p.terminationStatus),
                          userInfo: [NSLocalizedDescriptionKey: "openssl \(arguments.joined(separator: " ")): \(String(decoding: errData, as: UTF8.self))"])
        }
    }
}
