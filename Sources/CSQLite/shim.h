// C shim over the system libsqlite3 (GRDB-style [system] module).
// Swift cannot call C variadic functions (sqlite3_config, sqlite3_db_config) or use
// function-pointer sentinel macros (SQLITE_TRANSIENT, SQLITE_STATIC), so they are
// wrapped here as `static inline` functions.
#ifndef TOUCHSYNC_CSQLITE_SHIM_H
#define TOUCHSYNC_CSQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT: SQLite copies the bound value before bind returns.
static inline sqlite3_destructor_type ts_sqlite3_transient(void) {
    return SQLITE_TRANSIENT;
}

/// SQLITE_STATIC: the caller guarantees the bound value outlives the statement step.
static inline sqlite3_destructor_type ts_sqlite3_static(void) {
    return SQLITE_STATIC;
}

/// sqlite3_bind_text with SQLITE_TRANSIENT. `n` is the byte count (embedded NULs allowed).
/// A NULL `text` would bind SQL NULL, so an empty string is bound from a static "".
static inline int ts_sqlite3_bind_text_transient(sqlite3_stmt *stmt, int index, const char *text, int n) {
    if (text == 0 || n == 0) {
        return sqlite3_bind_text(stmt, index, "", 0, SQLITE_STATIC);
    }
    return sqlite3_bind_text(stmt, index, text, n, SQLITE_TRANSIENT);
}

/// Binds `n` bytes at `text` without a copy (SQLITE_STATIC): the caller keeps them unchanged until
/// the parameter is rebound or cleared.
static inline int ts_sqlite3_bind_text_static(sqlite3_stmt *stmt, int index, const char *text, int n) {
    if (text == 0 || n == 0) {
        return sqlite3_bind_text(stmt, index, "", 0, SQLITE_STATIC);
    }
    return sqlite3_bind_text(stmt, index, text, n, SQLITE_STATIC);
}

/// sqlite3_bind_blob with SQLITE_TRANSIENT. A zero-length blob is bound as zeroblob(0)
/// (binding a NULL pointer would produce SQL NULL instead of an empty blob).
static inline int ts_sqlite3_bind_blob_transient(sqlite3_stmt *stmt, int index, const void *bytes, int n) {
    if (bytes == 0 || n == 0) {
        return sqlite3_bind_zeroblob(stmt, index, 0);
    }
    return sqlite3_bind_blob(stmt, index, bytes, n, SQLITE_TRANSIENT);
}

/// sqlite3_db_config(db, op, int value, int *result) for the boolean SQLITE_DBCONFIG_* options
/// (e.g. SQLITE_DBCONFIG_DEFENSIVE, SQLITE_DBCONFIG_ENABLE_FKEY, SQLITE_DBCONFIG_DQS_DML).
static inline int ts_sqlite3_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}

/// sqlite3_config(SQLITE_CONFIG_LOG, callback, context). Must run before sqlite3_initialize.
static inline int ts_sqlite3_config_log(void (*callback)(void *, int, const char *), void *context) {
    return sqlite3_config(SQLITE_CONFIG_LOG, callback, context);
}

/// sqlite3_config with a single int argument (e.g. SQLITE_CONFIG_MULTITHREAD takes none,
/// SQLITE_CONFIG_MEMSTATUS takes an int). Must run before sqlite3_initialize.
static inline int ts_sqlite3_config_int(int op, int value) {
    return sqlite3_config(op, value);
}

#endif
