/// SQLite under `SQLConnection`: `SQLiteConnection`'s own methods already have the shape
/// `SQLBackend` asks for.
extension SQLiteConnection: SQLBackend {
    var dialect: SQLDialect { .sqlite }
}
