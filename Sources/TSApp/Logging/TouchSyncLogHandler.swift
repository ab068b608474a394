import Foundation
import Logging
import TSJSON

/// swift-log handler writing one line per event to standard error: readable text by default,
/// one JSON object per line with `--log-format json`.
public struct TouchSyncLogHandler: LogHandler {
    public enum Format: String, Sendable { case text, json }

    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    let label: String
    let format: Format

    public init(label: String, level: Logger.Level, format: Format) {
        self.label = label
        self.logLevel = level
        self.format = format
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    private static let lock = NSLock()

    public func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let ts = Self.timestamp()
        var line: String
        switch format {
        case .text:
            line = "\(ts) \(event.level.rawValue.uppercased().padding(toLength: 7, withPad: " ", startingAt: 0)) [\(label)] \(event.message)"
            for (k, v) in merged.sorted(by: { $0.key < $1.key }) { line += " \(k)=\(v)" }
        case .json:
            var o: JSONObject = ["ts": .string(ts), "level": .string(event.level.rawValue), "logger": .string(label), "msg": .string("\(event.message)")]
            for (k, v) in merged { o[k] = .string("\(v)") }
            line = JSONValue.object(o).serializedString()
        }
        line += "\n"
        Self.lock.lock()
        FileHandle.standardError.write(Data(line.utf8))
        Self.lock.unlock()
    }

    static func timestamp() -> String {
        var tv = timeval()
        gettimeofday(&tv, nil)
        var t = time_t(tv.tv_sec)
        var tmv = tm()
        gmtime_r(&t, &tmv)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tmv.tm_year + 1900, tmv.tm_mon + 1, tmv.tm_mday,
                      tmv.tm_hour, tmv.tm_min, tmv.tm_sec, Int(tv.tv_usec / 1000))
    }

    /// Installs the handler for the whole process (once).
    public static func bootstrap(level: Logger.Level, format: Format) {
        LoggingSystem.bootstrap { label in TouchSyncLogHandler(label: label, level: level, format: format) }
    }
}
