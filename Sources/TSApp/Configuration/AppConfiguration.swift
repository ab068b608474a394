import Foundation
import TSJSON

/// The effective configuration: defaults < config file (`--config`) < `TOUCHSYNC_*` environment
/// < command-line flags. Built by `AppConfiguration.load`; every field is a `Setting`.
public struct AppConfiguration: Sendable {
    public private(set) var values: [String: JSONValue]
    /// Where each value came from (for the start-up log).
    public private(set) var sources: [String: String]

    public init() {
        values = [:]
        sources = [:]
        for s in Setting.all { values[s.path] = s.defaultValue; sources[s.path] = "default" }
    }

    /// Loads the layers. `overrides` are the command-line flags (already as setting paths).
    public static func load(configFile: String?, environment: [String: String], overrides: [String: JSONValue]) throws -> AppConfiguration {
        var config = AppConfiguration()
        if let file = configFile {
            guard let data = FileManager.default.contents(atPath: file) else { throw ConfigurationError("cannot read config file \(file)") }
            let json: JSONValue
            do { json = try JSONValue.parse([UInt8](data)) } catch { throw ConfigurationError("config file \(file) is not valid JSON: \(error)") }
            guard let root = json.objectValue else { throw ConfigurationError("config file \(file) must hold a JSON object") }
            try config.merge(object: root, prefix: "", source: file)
        }
        for (name, raw) in environment where name.hasPrefix("TOUCHSYNC_") {
            guard let path = Setting.settingPath(forEnvironmentName: name), let setting = Setting.named(path) else { continue }
            try config.set(setting, try Self.parseEnvironment(raw, kind: setting.kind, name: name), source: "env \(name)")
        }
        for (path, value) in overrides {
            guard let setting = Setting.named(path) else { throw ConfigurationError("unknown setting \(path)") }
            try config.set(setting, value, source: "flag")
        }
        return config
    }

    private mutating func merge(object: JSONObject, prefix: String, source: String) throws {
        for (key, value) in object {
            let path = prefix.isEmpty ? key : prefix + "." + key
            if let setting = Setting.named(path) {
                try set(setting, value, source: source)
            } else if let nested = value.objectValue {
                try merge(object: nested, prefix: path, source: source)
            } else if !key.hasPrefix("_") && !key.hasPrefix("$") {
                throw ConfigurationError("\(source): unknown setting \(path)")
            }
        }
    }

    public mutating func set(_ setting: Setting, _ value: JSONValue, source: String) throws {
        let ok: Bool
        switch setting.kind {
        case .string: ok = value.stringValue != nil
        case .optionalString: ok = value.stringValue != nil || value.isNull
        case .int: ok = value.intValue != nil
        case .bool: ok = value.boolValue != nil
        case .stringList: ok = value.arrayValue?.allSatisfy { $0.stringValue != nil } == true
        case .optionalStringList: ok = value.isNull || value.arrayValue?.allSatisfy { $0.stringValue != nil } == true
        case .duration: ok = value.stringValue.flatMap(Self.parseDuration) != nil
        }
        guard ok else { throw ConfigurationError("\(source): \(setting.path) must be \(setting.kind)") }
        values[setting.path] = value
        sources[setting.path] = source
    }

    static func parseEnvironment(_ raw: String, kind: Setting.Kind, name: String) throws -> JSONValue {
        switch kind {
        case .string, .duration: return .string(raw)
        case .optionalString: return raw.isEmpty ? .null : .string(raw)
        case .int:
            guard let v = Int64(raw) else { throw ConfigurationError("\(name) must be an integer, got \(raw)") }
            return .int(v)
        case .bool:
            switch raw.lowercased() {
            case "1", "true", "yes", "on": return .bool(true)
            case "0", "false", "no", "off": return .bool(false)
            default: throw ConfigurationError("\(name) must be true or false, got \(raw)")
            }
        case .stringList, .optionalStringList:
            if raw.isEmpty { return kind == .optionalStringList ? .null : .array([]) }
            return .array(raw.split(separator: ",").map { .string($0.trimmingCharacters(in: .whitespaces)) })
        }
    }

    public func string(_ path: String) -> String { values[path]?.stringValue ?? "" }
    public func optionalString(_ path: String) -> String? { values[path]?.stringValue }
    public func int(_ path: String) -> Int { Int(values[path]?.intValue ?? 0) }
    /// A `.duration` setting ("250ms", "30s", "5m", "12h", "30d"); validated when set.
    public func duration(_ path: String) -> Duration { values[path]?.stringValue.flatMap(Self.parseDuration) ?? .zero }
    public func bool(_ path: String) -> Bool { values[path]?.boolValue ?? false }
    public func stringList(_ path: String) -> [String]? { values[path]?.arrayValue?.compactMap(\.stringValue) }

    /// The configuration as a nested JSON document (the example file; secrets masked when asked).
    public func document(maskSecrets: Bool) -> JSONValue {
        var root = JSONObject()
        for s in Setting.all {
            var value = values[s.path] ?? .null
            if maskSecrets && (s.path == "auth.jwtSecret" || s.path == "inspector.adminToken" || s.path == "metrics.token") && !value.isNull { value = "***" }
            let parts = s.path.split(separator: ".").map(String.init)
            Self.insert(&root, parts[...], value)
        }
        return .object(root)
    }

    private static func insert(_ o: inout JSONObject, _ parts: ArraySlice<String>, _ value: JSONValue) {
        guard let head = parts.first else { return }
        if parts.count == 1 { o[head] = value; return }
        var child = o[head]?.objectValue ?? JSONObject()
        insert(&child, parts.dropFirst(), value)
        o[head] = .object(child)
    }
}
