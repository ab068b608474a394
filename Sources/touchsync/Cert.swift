import ArgumentParser
import Foundation
import TSTLS

/// `touchsync cert`: a local CA and a server certificate for this machine, for
/// HTTPS to real devices and simulators during development. See docs/tls.md.
struct Cert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create (once) a local CA and a server certificate for localhost, this host's name and its LAN addresses.")

    @Option(help: "Directory for ca.pem, ca.key, server.pem and server.key.")
    var directory = "./data/tls"

    @Option(name: .customLong("name"), help: "Another host name for the certificate (repeatable).")
    var names: [String] = []

    @Option(name: .customLong("address"), help: "Another IP address for the certificate (repeatable).")
    var addresses: [String] = []

    @Flag(help: "Issue a new server certificate even if one exists (the CA is kept, so devices keep trusting it).")
    var renew = false

    func run() throws {
        let local = LocalCertificateAuthority.localNamesAndAddresses()
        let allNames = local.names + names.filter { !local.names.contains($0) }
        let allAddresses = local.addresses + addresses.filter { !local.addresses.contains($0) }
        let result: LocalCertificateAuthority.Result
        do {
            result = try LocalCertificateAuthority.create(in: directory, names: allNames, addresses: allAddresses, renewServer: renew)
        } catch {
            throw Fatal.fail("\(error)")
        }
        let f = result.files
        print(result.createdCA ? "Created a local CA: \(f.caCertificate) (key \(f.caKey), keep it private)"
                               : "Reusing the local CA in \(f.caCertificate)")
        if result.createdServerCertificate {
            print("Created the server certificate \(f.serverCertificate) (key \(f.serverKey)) for:")
            print("  " + (result.names + result.addresses).joined(separator: ", "))
        } else {
            print("Kept the existing server certificate \(f.serverCertificate) (--renew issues a new one)")
        }
        print("""

        Serve over HTTPS/WSS:
          touchsync serve --host 0.0.0.0 --tls-cert \(f.serverCertificate) --tls-key \(f.serverKey)

        Trust the CA (once per device):
          iOS Simulator:  xcrun simctl keychain booted add-root-cert \(f.caCertificate)
          iPhone / iPad:  send \(f.caCertificate) to the device (AirDrop, Mail or a download), open it and
                          install the profile (Settings > General > VPN & Device Management), then turn on
                          full trust in Settings > General > About > Certificate Trust Settings.
          macOS:          sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain \(f.caCertificate)
          curl / Python:  curl --cacert \(f.caCertificate) https://localhost:3000/health
        """)
    }
}
