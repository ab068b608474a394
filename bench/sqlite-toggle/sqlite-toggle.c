/*
 * bench/sqlite-toggle/sqlite-toggle.c — what SQLite itself does with the server's heart toggle:
 * the same statements in the same order inside the same transaction shape, with no HTTP, no
 * token, no event loop and no realtime event in front. This is the limit the server's durable
 * toggle is measured against (bench/README.md, "The durable toggle's limit").
 *
 * The database is a copy of one `touchsync bench-seed` writes (same schema, indexes, triggers and
 * data). One connection, the server writer's pragmas (journal_mode = WAL, synchronous = FULL,
 * foreign_keys = ON, its cache and mmap sizes), prepared statements kept for the whole run. Each
 * toggle is a random member of the room × a random element of the room (as bench/wrk/toggle.lua
 * draws them), run inside its own SAVEPOINT, as the server's writer runs each job of a group
 * commit; `--batch N` toggles share one BEGIN IMMEDIATE … COMMIT (the server's group commit takes
 * at most 64 jobs per transaction by default: `database.maxWriteBatch`). With synchronous = FULL
 * every COMMIT fsyncs the WAL (https://sqlite.org/pragma.html#pragma_synchronous), so a batch
 * of 1 is one fsync per toggle and a batch of 64 is one per 64.
 *
 * Per toggle, in the server's order (ReactionService.toggle, RoomEventNumbers.take,
 * AuthService.sessionUser): the room's event number; the caller's row; the element's row, author
 * and count with the membership check; the caller's heart deleted (RETURNING its id and time), or,
 * when there was none, inserted; the count ± 1; on an added heart of another's element the
 * author's notification; the three newest reactors when the count is above 0. Every column the
 * server reads is read here too (sqlite3_column_*), nothing is copied further.
 *
 * SQLite's own automatic checkpoint (1,000 pages, its default) runs on this connection: SQLite
 * alone has no other thread to move it to.
 *
 * Build and run (bench/run-compare.sh does both, with one seed per round):
 *   cc -O2 -o sqlite-toggle bench/sqlite-toggle/sqlite-toggle.c -lsqlite3
 *   ./sqlite-toggle --database copy-of-bench.sqlite --room "$(cat toggle-room.txt)" --seconds 10 --batch 64
 * Prints one line: RESULT {"rps": toggles per second, "p50_ms"/"p99_ms": a batch's time from its
 * BEGIN to its COMMIT's return (what the last toggle of a batch waits; the first waits as long),
 * "server_cpu_us_per_req": this process's CPU time per toggle, "toggles", "commits", "batch",
 * "added", "removed", "errors"}.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static sqlite3 *db;

static void die(const char *what) {
    fprintf(stderr, "sqlite-toggle: %s: %s\n", what, db ? sqlite3_errmsg(db) : "no database");
    exit(1);
}

static void exec(const char *sql) {
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "sqlite-toggle: %s: %s\n", sql, err ? err : "?");
        exit(1);
    }
}

static sqlite3_stmt *prepare(const char *sql) {
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK) die(sql);
    return s;
}

/* Steps a statement to its end, reading `columns` columns of every row; returns the rows. */
static int run(sqlite3_stmt *s, int columns) {
    int rows = 0, rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        for (int i = 0; i < columns; i++) {
            if (sqlite3_column_type(s, i) == SQLITE_INTEGER) {
                (void)sqlite3_column_int64(s, i);
            } else {
                (void)sqlite3_column_text(s, i);
                (void)sqlite3_column_bytes(s, i);
            }
        }
        rows++;
    }
    if (rc != SQLITE_DONE) die(sqlite3_sql(s));
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rows;
}

static void bind_text(sqlite3_stmt *s, int i, const char *t) {
    if (sqlite3_bind_text(s, i, t, -1, SQLITE_STATIC) != SQLITE_OK) die("bind");
}

/* xorshift64*: the draws and the ids' bytes (the server takes its ids from the CSPRNG). */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
    rng_state ^= rng_state >> 12; rng_state ^= rng_state << 25; rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

/* A lowercase version-4 UUID's 36 characters, as the server writes its ids. */
static void uuid_v4(char out[37]) {
    static const char hex[] = "0123456789abcdef";
    uint64_t a = rnd(), b = rnd();
    unsigned char bytes[16];
    memcpy(bytes, &a, 8); memcpy(bytes + 8, &b, 8);
    bytes[6] = (bytes[6] & 0x0f) | 0x40; bytes[8] = (bytes[8] & 0x3f) | 0x80;
    int o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
        out[o++] = hex[bytes[i] >> 4]; out[o++] = hex[bytes[i] & 15];
    }
    out[o] = 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The strings of a one-text-column query, malloc'd. */
static char **texts(const char *sql, const char *arg, int *count) {
    sqlite3_stmt *s = prepare(sql);
    bind_text(s, 1, arg);
    int cap = 64, n = 0;
    char **out = malloc(sizeof(char *) * cap);
    while (sqlite3_step(s) == SQLITE_ROW) {
        if (n == cap) out = realloc(out, sizeof(char *) * (cap *= 2));
        out[n++] = strdup((const char *)sqlite3_column_text(s, 0));
    }
    sqlite3_finalize(s);
    *count = n;
    return out;
}

int main(int argc, char **argv) {
    const char *path = NULL, *room = NULL;
    double seconds = 10;
    int batch = 64;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--database")) path = argv[i + 1];
        else if (!strcmp(argv[i], "--room")) room = argv[i + 1];
        else if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--batch")) batch = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed")) rng_state = strtoull(argv[i + 1], NULL, 10) | 1;
        else { fprintf(stderr, "sqlite-toggle: unknown option %s\n", argv[i]); return 2; }
    }
    if (!path || !room || batch < 1 || seconds <= 0) {
        fprintf(stderr, "usage: sqlite-toggle --database FILE --room ID [--seconds 10] [--batch 64] [--seed N]\n");
        return 2;
    }
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) die(path);
    /* The server writer's settings (SQLiteConnection.swift, DatabaseConfiguration's defaults). */
    exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;"
         "PRAGMA journal_size_limit = 67108864; PRAGMA cache_size = -32768; PRAGMA temp_store = MEMORY;"
         "PRAGMA mmap_size = 268435456; PRAGMA wal_autocheckpoint = 1000");

    int members = 0, elements = 0;
    char **users = texts("SELECT user_id FROM room_members WHERE room_id = ? ORDER BY user_id", room, &members);
    char **ids = texts("SELECT id FROM elements WHERE room_id = ? ORDER BY id", room, &elements);
    if (members == 0 || elements == 0) { fprintf(stderr, "sqlite-toggle: room %s has no members or no elements\n", room); return 1; }

    sqlite3_stmt *begin = prepare("BEGIN IMMEDIATE"), *commit = prepare("COMMIT");
    sqlite3_stmt *savepoint = prepare("SAVEPOINT ts_sp0"), *release = prepare("RELEASE ts_sp0");
    sqlite3_stmt *advance = prepare("UPDATE rooms SET event_seq = event_seq + ? WHERE id = ? RETURNING event_seq");
    sqlite3_stmt *user = prepare("SELECT id, username, first_name, avatar_url, token_version FROM users WHERE id = ?");
    sqlite3_stmt *element = prepare(
        "SELECT e.created_by, e.reaction_count FROM elements e WHERE e.id = ? AND e.room_id = ?\n"
        "  AND EXISTS(SELECT 1 FROM room_members m WHERE m.room_id = e.room_id AND m.user_id = ?)");
    sqlite3_stmt *del = prepare("DELETE FROM reactions WHERE element_id = ? AND user_id = ? AND type = 'heart' RETURNING id, created_at");
    sqlite3_stmt *ins = prepare(
        "INSERT INTO reactions (element_id, user_id, type, id, seq, created_at) VALUES (?, ?, 'heart', ?, ?, ?)\n"
        "ON CONFLICT (element_id, user_id, type) DO NOTHING");
    sqlite3_stmt *count = prepare("UPDATE elements SET reaction_count = reaction_count + ? WHERE id = ?");
    sqlite3_stmt *notify = prepare(
        "INSERT INTO notifications (id, user_id, type, room_id, element_id, actor_id, created_at) VALUES (?, ?, 'element_reaction', ?, ?, ?, ?)");
    sqlite3_stmt *top = prepare(
        "SELECT u.id, u.username, u.first_name, u.avatar_url FROM reactions r JOIN users u ON u.id = r.user_id\n"
        "WHERE r.element_id = ? ORDER BY r.seq DESC, r.user_id DESC LIMIT 3");

    size_t cap = 1 << 16, batches = 0;
    double *batch_ms = malloc(sizeof(double) * cap);
    long toggles = 0, added = 0, removed = 0;
    sqlite3_int64 last_seq = 0;
    double cpu0 = cpu_s(), t0 = now_s(), end = t0 + seconds, t = t0;
    char author[64];
    while (t < end) {
        double b0 = t;
        run(begin, 0);
        for (int k = 0; k < batch; k++) {
            const char *actor = users[rnd() % (uint64_t)members];
            const char *eid = ids[rnd() % (uint64_t)elements];
            struct timespec wall;
            clock_gettime(CLOCK_REALTIME, &wall);
            sqlite3_int64 now = wall.tv_sec, seq = (sqlite3_int64)wall.tv_sec * 1000000 + wall.tv_nsec / 1000;
            seq = seq > last_seq ? seq : last_seq + 1;
            last_seq = seq;
            run(savepoint, 0);
            sqlite3_bind_int64(advance, 1, 1); bind_text(advance, 2, room);
            run(advance, 1);
            bind_text(user, 1, actor);
            if (run(user, 5) != 1) { fprintf(stderr, "sqlite-toggle: no user %s\n", actor); return 1; }
            /* The element's author is kept past the statement's reset (the server keeps it as a String). */
            bind_text(element, 1, eid); bind_text(element, 2, room); bind_text(element, 3, actor);
            sqlite3_int64 before = -1;
            author[0] = 0;
            int rc = sqlite3_step(element);
            if (rc == SQLITE_ROW) {
                snprintf(author, sizeof author, "%s", (const char *)sqlite3_column_text(element, 0));
                before = sqlite3_column_int64(element, 1);
                rc = sqlite3_step(element);
            }
            if (rc != SQLITE_DONE) die("element");
            sqlite3_reset(element); sqlite3_clear_bindings(element);
            if (before < 0) { fprintf(stderr, "sqlite-toggle: element %s not found for %s\n", eid, actor); return 1; }
            bind_text(del, 1, eid); bind_text(del, 2, actor);
            sqlite3_int64 delta;
            if (run(del, 2) == 1) {
                delta = -1;
                removed++;
            } else {
                char id[37];
                uuid_v4(id);
                bind_text(ins, 1, eid); bind_text(ins, 2, actor); bind_text(ins, 3, id);
                sqlite3_bind_int64(ins, 4, seq); sqlite3_bind_int64(ins, 5, now);
                run(ins, 0);
                if (sqlite3_changes(db) != 1) { fprintf(stderr, "sqlite-toggle: the heart's insert changed nothing\n"); return 1; }
                delta = 1;
                added++;
            }
            sqlite3_bind_int64(count, 1, delta); bind_text(count, 2, eid);
            run(count, 0);
            if (delta == 1 && strcmp(author, actor) != 0) {
                char nid[37];
                uuid_v4(nid);
                bind_text(notify, 1, nid); bind_text(notify, 2, author); bind_text(notify, 3, room);
                bind_text(notify, 4, eid); bind_text(notify, 5, actor); sqlite3_bind_int64(notify, 6, now);
                run(notify, 0);
            }
            if (before + delta > 0) {
                bind_text(top, 1, eid);
                run(top, 4);
            }
            run(release, 0);
            toggles++;
        }
        run(commit, 0);
        t = now_s();
        if (batches == cap) batch_ms = realloc(batch_ms, sizeof(double) * (cap *= 2));
        batch_ms[batches++] = (t - b0) * 1000;
    }
    double elapsed = t - t0, cpu = cpu_s() - cpu0;
    qsort(batch_ms, batches, sizeof(double), cmp_double);
    double p50 = batch_ms[batches / 2], p99 = batch_ms[(size_t)((batches - 1) * 0.99)];
    printf("RESULT {\"rps\": %.1f, \"p50_ms\": %.3f, \"p99_ms\": %.3f, \"server_cpu_us_per_req\": %.2f, \"toggles\": %ld, "
           "\"commits\": %zu, \"batch\": %d, \"added\": %ld, \"removed\": %ld, \"errors\": 0, \"seconds\": %.3f}\n",
           toggles / elapsed, p50, p99, cpu * 1e6 / toggles, toggles, batches, batch, added, removed, elapsed);
    sqlite3_close_v2(db);
    return 0;
}
