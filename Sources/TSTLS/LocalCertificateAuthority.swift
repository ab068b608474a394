#if canImport(CTLS)
import CTLS
#endif
import Foundation

/// `touchsync cert` (docs/tls.md): a local CA and a server certificate signed by it, for
/// development against real devices. Made in-process with libcrypto's X509 API (not by shelling
/// out to the `openssl` CLI): the binary then needs nothing installed beyond the libssl it
/// already links, and the key never crosses a process boundary or a command line.
///
/// Keys are P-256 (ECDSA), signatures SHA-256. The CA: 10 years, basicConstraints CA:TRUE,
/// keyUsage keyCertSign/cRLSign. The server certificate: 800 days (Apple requires at most 825 for
/// certificates from a user-installed CA), subjectAltName with every name and address,
/// extendedKeyUsage serverAuth — what iOS's App Transport Security checks.
public enum LocalCertificateAuthority {
    public struct Files: Sendable {
        public let directory: String
        public var caCertificate: String { directory + "/ca.pem" }
        public var caKey: String { directory + "/ca.key" }
        public var serverCertificate: String { directory + "/server.pem" }
        public var serverKey: String { directory + "/server.key" }
        public init(directory: String) { self.directory = directory }
    }

    public struct Result: Sendable {
        public let files: Files
        /// False when an existing CA in the directory was reused.
        public let createdCA: Bool
        /// False when the server certificate already existed and was kept.
        public let createdServerCertificate: Bool
        public let names: [String]
        public let addresses: [String]
    }

    /// Creates (once) the CA and the server certificate in `directory`. An existing CA is reused;
    /// an existing server certificate is kept unless `renewServer`.
    public static func create(in directory: String, names: [String], addresses: [String], renewServer: Bool = false) throws -> Result {
        #if canImport(CTLS)
        return try createWithLibcrypto(in: directory, names: names, addresses: addresses, renewServer: renewServer)
        #else
        throw TLSError(TLSSupport.unavailableMessage)
        #endif
    }

    /// This machine's names and LAN addresses for the certificate: localhost, the host name (and
    /// its `.local` mDNS form), 127.0.0.1, ::1, and every non-loopback IPv4 address.
    public static func localNamesAndAddresses() -> (names: [String], addresses: [String]) {
        var names = ["localhost"]
        let host = ProcessInfo.processInfo.hostName
        if !host.isEmpty && host != "localhost" {
            names.append(host)
            if !host.contains(".") { names.append(host + ".local") }
        }
        var addresses = ["127.0.0.1", "::1"]
        for a in Host.current().addresses where a.contains(".") && !a.hasPrefix("127.") && !addresses.contains(a) {
            addresses.append(a)
        }
        return (names, addresses)
    }
}

#if canImport(CTLS)
extension LocalCertificateAuthority {
    private static func createWithLibcrypto(in directory: String, names: [String], addresses: [String], renewServer: Bool) throws -> Result {
        let files = Files(directory: directory)
        let fm = FileManager.default
        try fm.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var createdCA = false
        let caKey: OpaquePointer
        let caCert: OpaquePointer
        if fm.fileExists(atPath: files.caCertificate) && fm.fileExists(atPath: files.caKey) {
            caKey = try readKey(files.caKey)
            caCert = try readCertificate(files.caCertificate)
        } else {
            guard let key = ts_ec_p256_keygen() else { throw TLSError("key generation failed: \(TLSContext.opensslError())") }
            caKey = key
            caCert = try makeCertificate(commonName: "TouchSync Development CA (\(ProcessInfo.processInfo.hostName))", key: key,
                                         issuer: nil, issuerKey: key, days: 3650,
                                         extensions: [(NID_basic_constraints, "critical,CA:TRUE"),
                                                      (NID_key_usage, "critical,keyCertSign,cRLSign"),
                                                      (NID_subject_key_identifier, "hash")])
            try write(pem: pemKey(key), to: files.caKey, mode: 0o600)
            try write(pem: pemCertificate(caCert), to: files.caCertificate, mode: 0o644)
            createdCA = true
        }
        defer { EVP_PKEY_free(caKey); X509_free(caCert) }

        var createdServer = false
        if renewServer || createdCA || !fm.fileExists(atPath: files.serverCertificate) || !fm.fileExists(atPath: files.serverKey) {
            guard let key = ts_ec_p256_keygen() else { throw TLSError("key generation failed: \(TLSContext.opensslError())") }
            defer { EVP_PKEY_free(key) }
            let san = (names.map { "DNS:" + $0 } + addresses.map { "IP:" + $0 }).joined(separator: ",")
            let cert = try makeCertificate(commonName: names.first ?? "localhost", key: key, issuer: caCert, issuerKey: caKey, days: 800,
                                           extensions: [(NID_basic_constraints, "critical,CA:FALSE"),
                                                        (NID_key_usage, "critical,digitalSignature"),
                                                        (NID_ext_key_usage, "serverAuth"),
                                                        (NID_subject_alt_name, san),
                                                        (NID_subject_key_identifier, "hash"),
                                                        (NID_authority_key_identifier, "keyid:always")])
            defer { X509_free(cert) }
            try write(pem: pemKey(key), to: files.serverKey, mode: 0o600)
            try write(pem: pemCertificate(cert), to: files.serverCertificate, mode: 0o644)
            createdServer = true
        }
        return Result(files: files, createdCA: createdCA, createdServerCertificate: createdServer, names: names, addresses: addresses)
    }

    // MARK: libcrypto

    private static func makeCertificate(commonName: String, key: OpaquePointer, issuer: OpaquePointer?, issuerKey: OpaquePointer,
                                        days: Int, extensions: [(Int32, String)]) throws -> OpaquePointer {
        guard let x = X509_new() else { throw TLSError("X509_new failed") }
        var ok = false
        defer { if !ok { X509_free(x) } }
        _ = X509_set_version(x, 2)  // v3
        var serial = [UInt8](repeating: 0, count: 8)
        _ = RAND_bytes(&serial, Int32(serial.count))
        let serialValue = serial.reduce(0) { ($0 << 8) | Int($1) } & 0x7fff_ffff_ffff_ffff
        _ = ASN1_INTEGER_set(X509_get_serialNumber(x), serialValue)
        _ = X509_gmtime_adj(X509_getm_notBefore(x), -3600)
        _ = X509_gmtime_adj(X509_getm_notAfter(x), days * 86_400)
        _ = X509_set_pubkey(x, key)
        let name = X509_get_subject_name(x)
        _ = X509_NAME_add_entry_by_txt(name, "O", ts_mbstring_asc(), "TouchSync local development", -1, -1, 0)
        _ = X509_NAME_add_entry_by_txt(name, "CN", ts_mbstring_asc(), commonName, -1, -1, 0)
        _ = X509_set_issuer_name(x, issuer.map { X509_get_subject_name($0) } ?? name)
        for (nid, value) in extensions where ts_x509_add_ext(x, issuer ?? x, nid, value) != 1 {
            throw TLSError("cannot add certificate extension \(value): \(TLSContext.opensslError())")
        }
        guard X509_sign(x, issuerKey, EVP_sha256()) > 0 else { throw TLSError("signing the certificate failed: \(TLSContext.opensslError())") }
        ok = true
        return x
    }

    private static func pemCertificate(_ x: OpaquePointer) throws -> [UInt8] {
        try withMemoryBIO { PEM_write_bio_X509($0, x) }
    }

    private static func pemKey(_ key: OpaquePointer) throws -> [UInt8] {
        try withMemoryBIO { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
    }

    private static func withMemoryBIO(_ body: (OpaquePointer) -> Int32) throws -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { throw TLSError("BIO_new failed") }
        defer { BIO_free(bio) }
        guard body(bio) == 1 else { throw TLSError("PEM encoding failed: \(TLSContext.opensslError())") }
        let n = ts_bio_pending(bio)
        var out = [UInt8](repeating: 0, count: n)
        let read = BIO_read(bio, &out, Int32(n))
        return Array(out.prefix(max(0, Int(read))))
    }

    private static func readCertificate(_ path: String) throws -> OpaquePointer {
        guard let bio = BIO_new_file(path, "r") else { throw TLSError("cannot open \(path): \(TLSContext.opensslError())") }
        defer { BIO_free(bio) }
        guard let x = PEM_read_bio_X509(bio, nil, nil, nil) else { throw TLSError("\(path) is not a PEM certificate: \(TLSContext.opensslError())") }
        return x
    }

    private static func readKey(_ path: String) throws -> OpaquePointer {
        guard let bio = BIO_new_file(path, "r") else { throw TLSError("cannot open \(path): \(TLSContext.opensslError())") }
        defer { BIO_free(bio) }
        guard let k = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else { throw TLSError("\(path) is not a PEM private key: \(TLSContext.opensslError())") }
        return k
    }

    private static func write(pem: [UInt8], to path: String, mode: Int) throws {
        let fm = FileManager.default
        let tmp = path + ".tmp"
        try? fm.removeItem(atPath: tmp)
        guard fm.createFile(atPath: tmp, contents: Data(pem), attributes: [.posixPermissions: mode]) else {
            throw TLSError("cannot write \(path)")
        }
        guard rename(tmp, path) == 0 else { throw TLSError("cannot move \(tmp) to \(path)") }  // atomic replace
    }
}
#endif
