import ArgumentParser
import Foundation
import TSSockets

/// Load generator for the realtime scenarios of bench/README.md. One process, one epoll loop
/// (TSSockets), so it holds 10k sockets on one core. Prints human-readable results and a last
/// line `RESULT {json}` that bench/run-realtime.sh aggregates.
struct TouchSyncBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "touchsync-bench",
        abstract: "Socket.IO load generator: fan-out, room join, reconnect storm, app-user capacity.",
        subcommands: [Fanout.self, Join.self, Reconnect.self, Capacity.self, JSONParse.self])
}

struct Common: ParsableArguments {
    @Option(help: "Server base URL.")
    var url = "http://127.0.0.1:3000"

    @Option(help: "Directory written by `touchsync bench-seed` (tokens, room ids).")
    var data = "bench/.data"

    @Option(help: "Server process id, to read its RSS from /proc.")
    var serverPid: Int?

    // cluster: sockets on other nodes than the REST writes (cross-node delivery).
    @Option(help: "Comma-separated base URLs the sockets connect to, round-robin (default: --url). REST still goes to --url.")
    var socketUrls: String?

    func env() throws -> BenchEnv {
        Socket.ignoreSIGPIPE()
        var e = try BenchEnv.load(url: url, data: data, serverPID: serverPid)
        if let list = socketUrls {
            e.socketEndpoints = try list.split(separator: ",").map { try BenchEnv.endpoint(String($0)) }
        }
        return e
    }
}

func printResult(_ r: [String: Double]) {
    let body = r.keys.sorted().map { k in "\"\(k)\": \(r[k]!.isFinite ? String(format: "%.3f", r[k]!) : "null")" }.joined(separator: ", ")
    print("RESULT {\(body)}")
}

struct Fanout: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "N sockets; element creations over REST; creation→delivery latency.")
    @OptionGroup var common: Common
    @Option(help: "Sockets (each joins the fan-out room unless --global).") var sockets = 1000
    @Option(help: "Element creations measured.") var events = 200
    @Option(help: "Creations per second (open loop); 0 = closed loop.") var rate = 100.0
    @Option(help: "HTTP connections used for creations.") var concurrency = 4
    @Flag(help: "Measure element:created:global on sockets that did not join the room.") var global = false

    func run() throws {
        var o = FanoutScenario.Options()
        o.sockets = sockets
        o.events = events
        o.rate = rate
        o.concurrency = concurrency
        o.global = global
        printResult(FanoutScenario(env: try common.env(), options: o).run())
    }
}

struct Join: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "room:join of the 100-element room → elements:batch latency.")
    @OptionGroup var common: Common
    @Option(help: "Sockets joining concurrently (each joins again after its ack).") var sockets = 4
    @Option(help: "Joins measured in total.") var joins = 2000

    func run() throws {
        printResult(JoinScenario(env: try common.env(), sockets: sockets, joins: joins).run())
    }
}

struct Reconnect: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "N joined sockets dropped at once, then reconnected and rejoined at once.")
    @OptionGroup var common: Common
    @Option(help: "Sockets.") var sockets = 1000

    func run() throws {
        printResult(ReconnectScenario(env: try common.env(), sockets: sockets).run())
    }
}

struct JSONParse: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "json",
        abstract: "TSJSON parse rate (MB/s) of a 1 MiB body of 100,000 keys and other request-sized documents; no server.")
    @Option(help: "Parses per document; the best counts.") var rounds = 10

    func run() throws { printResult(JSONParseBench.run(rounds: rounds)) }
}

TouchSyncBench.main()
