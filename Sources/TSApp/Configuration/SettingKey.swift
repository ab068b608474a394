import TSJSON

/// Where the typed keys live (`extension SettingKeys` in each layer's `*+Settings.swift`, gathered
/// by `SettingKeys.registry` in Setting.swift), and what they share: the
/// registry entry that documents the setting. A class, so that `configuration[.serverPort]` finds
/// the key as a static member inherited by `SettingKey<Value>` (a generic type cannot hold
/// static stored properties itself).
public class SettingKeys: @unchecked Sendable {
    // @unchecked: every stored property is a `let` of a Sendable type; the class is open only so
    // that `SettingKey<Value>` can inherit the keys.
    public let setting: Setting
    public var path: String { setting.path }

    init(setting: Setting) { self.setting = setting }
}

/// A setting whose value is read as `Value`: `configuration[.serverMaxBodyBytes]` is an `Int`,
/// `configuration[.serverIdleTimeout]` a `Duration`, and a misspelt key does not compile.
public final class SettingKey<Value: SettingValue>: SettingKeys, @unchecked Sendable {
    /// `defaultValue` is written as it appears in a config file (`"30s"` for a duration);
    /// `SettingsRegistryTests` checks that every default reads as `Value`.
    init(_ path: String, _ defaultValue: JSONValue, integerForm: Setting.IntegerForm? = nil, help: String) {
        super.init(setting: Setting(path: path, kind: Value.settingKind, defaultValue: defaultValue, help: help, integerForm: integerForm))
    }
}

/// The types a setting is read as, each with the `Setting.Kind` the loader checks values against.
public protocol SettingValue: Sendable {
    static var settingKind: Setting.Kind { get }
    /// nil when `json` is not a value of this type (the loader has already refused such a value).
    init?(settingJSON json: JSONValue)
}

extension Int: SettingValue {
    public static var settingKind: Setting.Kind { .int }
    public init?(settingJSON json: JSONValue) {
        guard let v = json.intValue, let i = Int(exactly: v) else { return nil }
        self = i
    }
}

extension String: SettingValue {
    public static var settingKind: Setting.Kind { .string }
    public init?(settingJSON json: JSONValue) {
        guard let s = json.stringValue else { return nil }
        self = s
    }
}

extension Bool: SettingValue {
    public static var settingKind: Setting.Kind { .bool }
    public init?(settingJSON json: JSONValue) {
        guard let b = json.boolValue else { return nil }
        self = b
    }
}

extension Array: SettingValue where Element == String {
    public static var settingKind: Setting.Kind { .stringList }
    public init?(settingJSON json: JSONValue) {
        guard let items = json.arrayValue else { return nil }
        let strings = items.compactMap(\.stringValue)
        guard strings.count == items.count else { return nil }
        self = strings
    }
}

/// "250ms", "30s", "5m", "12h", "30d" (`AppConfiguration.parseDuration`).
extension Duration: SettingValue {
    public static var settingKind: Setting.Kind { .duration }
    public init?(settingJSON json: JSONValue) {
        guard let d = json.stringValue.flatMap(AppConfiguration.parseDuration) else { return nil }
        self = d
    }
}

/// A value that may also be unset (`null`): `String?` and `[String]?`.
public protocol OptionalSettingValue: SettingValue {
    static var optionalSettingKind: Setting.Kind { get }
}

extension String: OptionalSettingValue {
    public static var optionalSettingKind: Setting.Kind { .optionalString }
}

extension Array: OptionalSettingValue where Element == String {
    public static var optionalSettingKind: Setting.Kind { .optionalStringList }
}

extension Optional: SettingValue where Wrapped: OptionalSettingValue {
    public static var settingKind: Setting.Kind { Wrapped.optionalSettingKind }
    public init?(settingJSON json: JSONValue) {
        if json.isNull { self = .none; return }
        guard let w = Wrapped(settingJSON: json) else { return nil }
        self = .some(w)
    }
}
