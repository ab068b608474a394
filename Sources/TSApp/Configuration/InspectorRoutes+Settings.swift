import TSInspector
import TSRoutes

/// The live inspector (`inspector.*`): whether it is served, its admin token, its data browser
/// and request list.
extension SettingKeys {
    public static let inspectorEnabled = SettingKey<Bool>("inspector.enabled", true, help: "Serve the live inspector at /inspector (serve --no-inspector turns it off: 404). With TOUCHSYNC_ENV=production it is served only when inspector.adminToken is set.")
    public static let inspectorAdminToken = SettingKey<String?>("inspector.adminToken", nil, help: "When set, /inspector and /inspector/api/* require it (Authorization: Bearer <token>, or ?token=<token> on the page) and answer it from any address. Unset: only requests from this machine (TCP peer on loopback, not forwarded for another client) are answered, others get 403. Needed for the inspector with TOUCHSYNC_ENV=production.")
    // inspector: the inspector's data browser and request list.
    public static let inspectorMaxPageSize = SettingKey<Int>("inspector.maxPageSize", 200, help: "Most rows one page of the inspector's data browser returns (a larger ?limit= is cut to it).")
    public static let inspectorRequestLogCapacity = SettingKey<Int>("inspector.requestLogCapacity", 100, help: "Request/response pairs the inspector's request list keeps (oldest evicted); 0 turns it off. Never on with TOUCHSYNC_ENV=production.")
    public static let inspectorRequestLogMaxBodyBytes = SettingKey<Int>("inspector.requestLogMaxBodyBytes", 16384, help: "Bytes of each request and response body the request list keeps (the rest is cut when recorded).")

    /// The `inspector.*` keys, in documentation order.
    static let inspectorKeys: [SettingKeys] = [
        .inspectorEnabled, .inspectorAdminToken, .inspectorMaxPageSize, .inspectorRequestLogCapacity,
        .inspectorRequestLogMaxBodyBytes,
    ]
}

extension InspectorRoutes {
    /// The inspector's settings, read once for `TouchSyncServer.registerInspector`.
    struct Settings: Sendable {
        var enabled: Bool
        var adminToken: String?
        var maxPageSize: Int
        var requestLogCapacity: Int
        var requestLogMaxBodyBytes: Int

        init(reader: AppConfiguration) {
            enabled = reader[.inspectorEnabled]
            adminToken = reader[.inspectorAdminToken]
            maxPageSize = reader[.inspectorMaxPageSize]
            requestLogCapacity = reader[.inspectorRequestLogCapacity]
            requestLogMaxBodyBytes = reader[.inspectorRequestLogMaxBodyBytes]
        }
    }
}
