#if canImport(TSJSON)
import TSJSON
#endif

/// `touchsync-bench json`: how fast TSJSON parses request-sized documents, in MB/s.
/// Pure CPU, no server: each document is parsed `rounds` times and the best round counts.
/// Documents: the hostile 1 MiB body of 100,000 keys, an array of element-like objects, and one
/// long string full of escapes.
enum JSONParseBench {
    struct Document {
        let name: String
        let bytes: [UInt8]
    }

    static func documents() -> [Document] {
        var keys: [UInt8] = [UInt8(ascii: "{")]
        for k in 0..<100_000 {
            let digits = Array(String(k).utf8)
            keys.append(UInt8(ascii: "\""))
            keys += [UInt8](repeating: UInt8(ascii: "0"), count: 5 - digits.count) + digits
            keys += Array("\":".utf8)
            keys.append(UInt8(ascii: "0") + UInt8(k % 10))
            keys.append(UInt8(ascii: ","))
        }
        keys += Array("\"pad\":\"".utf8)
        keys += [UInt8](repeating: UInt8(ascii: "x"), count: (1 << 20) - keys.count - 2)
        keys += Array("\"}".utf8)

        var elements = "["
        for i in 0..<4_000 {
            if i > 0 { elements += "," }
            elements += #"{"id":"0b6f3c9e-6a53-4d1e-9b1f-\#(1_000_000_000_000 + i)","roomId":"9d7c1f0e-2b7a-4c57-8d0e-3f2a1b4c5d6e","#
                + #""type":"note","content":"Hello \"world\" \u00e9 line\nnext","x":\#(i).25,"y":-\#(i * 3),"width":120,"#
                + #""height":80.5,"rotation":0,"zIndex":\#(i),"createdBy":"bench\#(i % 1000)","createdAt":"2026-11-22T12:00:00.000Z","#
                + ##""metadata":{"color":"#ffcc00","tags":["a","b"],"locked":false,"parent":null}}"##
        }
        elements += "]"

        let escaped = "\"" + String(repeating: #"plain text \"quoted\" \\ \n \u00e9\ud83d\ude00 "#, count: 20_000) + "\""
        return [
            Document(name: "object_100k_keys_1MiB", bytes: keys),
            Document(name: "array_4000_elements", bytes: Array(elements.utf8)),
            Document(name: "string_escapes", bytes: Array(escaped.utf8)),
        ]
    }

    /// MB/s (10^6 bytes per second) of the best of `rounds` parses of each document.
    static func run(rounds: Int = 10, print report: (String) -> Void = { Swift.print($0) }) -> [String: Double] {
        var result: [String: Double] = [:]
        let clock = ContinuousClock()
        for doc in documents() {
            var best = Duration.seconds(1_000)
            var members = 0
            for _ in 0..<max(1, rounds) {
                let start = clock.now
                let value = try? JSONValue.parse(doc.bytes)
                let elapsed = clock.now - start
                if elapsed < best { best = elapsed }
                members = value?.objectValue?.count ?? value?.arrayValue?.count ?? (value?.stringValue?.utf8.count ?? -1)
            }
            let seconds = Double(best.components.seconds) + Double(best.components.attoseconds) * 1e-18
            let mbps = Double(doc.bytes.count) / seconds / 1e6
            report("\(doc.name): \(doc.bytes.count) bytes, \(members) members/bytes parsed, best of \(rounds): "
                   + "\(Int(seconds * 1e6)) µs = \(Int(mbps.rounded())) MB/s")
            result[doc.name + "_MBps"] = mbps
        }
        return result
    }
}
