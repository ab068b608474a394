/// Reading settings from `TOUCHSYNC_*` variables, and saying which of them nothing reads: a
/// misspelt variable is otherwise a setting that silently keeps its default, while the same typo
/// in a config file stops the start (`AppConfiguration.merge`).
extension Setting {
    /// The setting an environment variable sets: a short alias (`TOUCHSYNC_PORT`), the setting's
    /// own name, its spelled-out older form (`TOUCHSYNC_REALTIME_ALLOW_E_I_O3`), or a duration's
    /// older name (`Setting.IntegerForm`; then the path returned is that name, for `Setting.resolve`).
    public static func settingPath(forEnvironmentName name: String) -> String? {
        if let alias = environmentAliases[name] { return alias }
        if let setting = all.first(where: { $0.environmentName == name || $0.spelledOutEnvironmentName == name }) { return setting.path }
        // A duration's older name, which takes a bare number (TOUCHSYNC_SERVER_IDLE_TIMEOUT_SECONDS=60).
        return all.lazy.compactMap(\.integerForm).first { $0.environmentName == name }?.path
    }

    /// `TOUCHSYNC_*` variables the programs read that are not settings: the production switch, the
    /// migrations directory, what `touchsync exec` exports to its command (and a nested touchsync
    /// inherits), and the test suite's own switches.
    public static let otherEnvironmentNames: Set<String> = [
        "TOUCHSYNC_ENV", "TOUCHSYNC_MIGRATIONS_DIR", "TOUCHSYNC_URL", "TOUCHSYNC_FIXTURES_FILE",
        "TOUCHSYNC_BIN", "TOUCHSYNC_UPDATE_API_DOCS", "TOUCHSYNC_REQUIRE_OPENAPI_VALIDATOR",
        "TOUCHSYNC_CLUSTER_SQLITE", "TOUCHSYNC_FUZZ",
    ]

    /// Prefixes of the same: exec's per-fixture variables (docs/exec.md) and the test suite's
    /// `TOUCHSYNC_TEST_*` (scripts/test, conformance/).
    public static let otherEnvironmentPrefixes = [
        "TOUCHSYNC_TOKEN_", "TOUCHSYNC_USER_ID_", "TOUCHSYNC_ROOM_", "TOUCHSYNC_ELEMENT_", "TOUCHSYNC_MESSAGE_",
        "TOUCHSYNC_POST_", "TOUCHSYNC_TEST_",
    ]

    /// One line naming every `TOUCHSYNC_*` variable in `environment` that nothing reads, each with
    /// the closest setting's variable; nil when there is none.
    public static func unknownEnvironmentWarning(_ environment: [String: String]) -> String? {
        let unknown = environment.keys.filter { name in
            name.hasPrefix("TOUCHSYNC_") && settingPath(forEnvironmentName: name) == nil && !otherEnvironmentNames.contains(name)
                && !otherEnvironmentPrefixes.contains { name.hasPrefix($0) }
        }.sorted()
        guard !unknown.isEmpty else { return nil }
        let known = all.map(\.environmentName) + environmentAliases.keys.sorted() + all.compactMap(\.integerForm?.environmentName)
        let described = unknown.map { name -> String in
            guard let closest = known.min(by: { editDistance($0, name) < editDistance($1, name) }) else { return name }
            return "\(name) (did you mean \(closest)?)"
        }
        return "ignoring environment variable\(unknown.count == 1 ? "" : "s") that set\(unknown.count == 1 ? "s" : "") nothing: "
            + described.joined(separator: ", ") + "; the settings and their variables are in the README's settings table"
    }

    /// The setting path closest to a misspelt `path` (a config file's key), when one is close
    /// enough to be a likely typo: at most a third of its length away.
    public static func closestPath(to path: String) -> String? {
        let known = all.map(\.path) + all.compactMap(\.integerForm?.path)
        guard let closest = known.min(by: { editDistance($0, path) < editDistance($1, path) }),
              editDistance(closest, path) <= max(2, path.utf8.count / 3) else { return nil }
        return closest
    }

    /// Levenshtein distance over bytes (the names are ASCII).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let x = Array(a.utf8), y = Array(b.utf8)
        var row = Array(0...y.count)
        for (i, cx) in x.enumerated() {
            var diagonal = row[0]
            row[0] = i + 1
            for (j, cy) in y.enumerated() {
                let above = row[j + 1]
                row[j + 1] = Swift.min(above + 1, row[j] + 1, diagonal + (cx == cy ? 0 : 1))
                diagonal = above
            }
        }
        return row[y.count]
    }
}
