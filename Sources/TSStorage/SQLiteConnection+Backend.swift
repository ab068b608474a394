/// SQLite under `SQLConnection`: `SQLiteConnection`'s own methods already have the shape
/// `SQLBackend` asks for.
extension SQLiteConnection: SQLBackend {
    var dialect: SQLDialect { .sqlite }

    /// In process: no round trip to save, and no `SQLValue`s to build for it.
    func prefetch(_ sql: String, _ args: SQLTextSlices) {}
}
