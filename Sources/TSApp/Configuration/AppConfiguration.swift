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
            guard let path = Setting.settingPath(forEnvironmentName: name), let (setting, unit) = Setting.resolve(path) else { continue }
            try config.set(setting, try Self.parseEnvironment(raw, kind: setting.kind, integerUnit: unit, name: name), source: "env \(name)",
                           as: path, integerUnit: unit)
        }
        for (path, value) in overrides {
            guard let (setting, unit) = Setting.resolve(path) else { throw ConfigurationError("unknown setting \(path)") }
            try config.set(setting, value, source: "flag", as: path, integerUnit: unit)
        }
        return config
    }

    private mutating func merge(object: JSONObject, prefix: String, source: String) throws {
        for (key, value) in object {
            let path = prefix.isEmpty ? key : prefix + "." + key
            if let (setting, unit) = Setting.resolve(path) {
                try set(setting, value, source: source, as: path, integerUnit: unit)
            } else if let nested = value.objectValue {
                try merge(object: nested, prefix: path, source: source)
            } else if !key.hasPrefix("_") && !key.hasPrefix("$") {
                throw ConfigurationError("\(source): unknown setting \(path)" + (Setting.closestPath(to: path).map { " (did you mean \($0)?)" } ?? ""))
            }
        }
    }

    /// Sets `setting` from `source`, refusing a value of the wrong type. `name` is the name the
    /// source used (a `.duration`'s older name, for one), and a `.duration` set under a name with
    /// an `integerUnit` also takes a whole number of that unit (stored as "60s" or "250ms").
    public mutating func set(_ setting: Setting, _ value: JSONValue, source: String, as name: String? = nil,
                             integerUnit: Duration? = nil) throws {
        let name = name ?? setting.path
        var value = value
        if setting.kind == .duration, let unit = integerUnit, let n = value.intValue {
            guard n >= 0 else { throw ConfigurationError("\(source): \(name) must not be negative, got \(n)") }
            value = .string(unit == .milliseconds(1) ? "\(n)ms" : "\(n)s")
        }
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
        guard ok else {
            if setting.kind == .duration {
                let number = integerUnit.map { $0 == .milliseconds(1) ? " or a whole number of milliseconds" : " or a whole number of seconds" } ?? ""
                throw ConfigurationError("\(source): \(name) must be a duration such as \"30s\" or \"250ms\" (units ms, s, m, h, d)\(number)")
            }
            throw ConfigurationError("\(source): \(name) must be \(setting.kind)")
        }
        values[setting.path] = value
        sources[setting.path] = source
    }

    static func parseEnvironment(_ raw: String, kind: Setting.Kind, integerUnit: Duration? = nil, name: String) throws -> JSONValue {
        switch kind {
        case .duration:
            // An older name's bare number ("60" in TOUCHSYNC_SERVER_IDLE_TIMEOUT_SECONDS).
            if integerUnit != nil, let n = Int64(raw) { return .int(n) }
            return .string(raw)
        case .string: return .string(raw)
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

    /// A setting's value, as its key's type: `configuration[.serverMaxBodyBytes]` is an `Int`.
    /// The only way to read a setting: there is no lookup by name to misspell.
    public subscript<Value: SettingValue>(key: SettingKey<Value>) -> Value {
        if let value = values[key.path].flatMap(Value.init(settingJSON:)) { return value }
        // `set` refuses a value of the wrong type, and SettingsRegistryTests reads every default.
        guard let fallback = Value(settingJSON: key.setting.defaultValue) else {
            preconditionFailure("the default of \(key.path) is not a \(Value.self)")
        }
        return fallback
    }

    /// Settings whose value `document(maskSecrets: true)` hides.
    static let secrets: Set<String> = [SettingKeys.authJwtSecret.path, SettingKeys.inspectorAdminToken.path, SettingKeys.metricsToken.path]

    /// The configuration as a nested JSON document (the example file; secrets masked when asked).
    public func document(maskSecrets: Bool) -> JSONValue {
        var root = JSONObject()
        for s in Setting.all {
            var value = values[s.path] ?? .null
            if maskSecrets && Self.secrets.contains(s.path) && !value.isNull { value = "***" }
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
