// C shim over the system libpq (https://www.postgresql.org/docs/15/libpq.html), in the style of
// CSQLite: a [system] module over the real header, nothing hand-typed. Built and linked on Linux
// only (Package.swift: a `.when(platforms: [.linux])` dependency), so a Mac building the SQLite
// backend needs no libpq. Debian: `apt-get install libpq-dev` (header in /usr/include/postgresql).
#ifndef TOUCHSYNC_CPOSTGRES_SHIM_H
#define TOUCHSYNC_CPOSTGRES_SHIM_H

#if __has_include(<postgresql/libpq-fe.h>)
#include <postgresql/libpq-fe.h>
#else
#include <libpq-fe.h>
#endif

/// PG_DIAG_SQLSTATE and friends are `#define`d characters ('C', 'M', …); Swift imports them as
/// Int32 already, but name the ones used here once so call sites read clearly.
static inline int ts_pq_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int ts_pq_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }

#endif
