-- Explicit creation order instead of SQLite's implicit rowid (stable listings on both backends),
-- and a reactions table keyed for the toggle's lookup. PostgreSQL has no rowid; its schema
-- (Migrations/postgres/) has these columns from the start.
--
-- `seq`: an app-assigned BIGINT, strictly increasing per process (the wall clock in microseconds,
-- or the previous value + 1; TSDomain's SequenceSource). Listings order by (seq, id): `id` breaks
-- the tie of two nodes in the same microsecond. Rows from before this migration get
-- `seq = rowid`: their order is kept, and every new (microsecond) value sorts after them.
--
-- `<table>_by_seq` indexes serve the inspector's keyset pages and the export, in creation order.
-- Tables other tables reference with ON DELETE CASCADE (users, rooms, elements, posts) only get a
-- column (ALTER TABLE ADD COLUMN, no rebuild: a DROP TABLE would cascade to their children).

ALTER TABLE users ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE users SET seq = rowid;
CREATE INDEX users_by_seq ON users(seq);

ALTER TABLE rooms ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE rooms SET seq = rowid;
CREATE INDEX rooms_by_seq ON rooms(seq);

-- A room's elements, oldest first.
ALTER TABLE elements ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE elements SET seq = rowid;
CREATE INDEX elements_by_room_seq ON elements(room_id, seq, id);
DROP INDEX elements_by_room;

-- A room's messages, newest first, paged by (seq, id).
ALTER TABLE messages ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE messages SET seq = rowid;
CREATE INDEX messages_by_room_seq ON messages(room_id, seq, id);
DROP INDEX messages_by_room_time;

ALTER TABLE posts ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE posts SET seq = rowid;
CREATE INDEX posts_by_seq ON posts(seq);

ALTER TABLE devices ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE devices SET seq = rowid;
CREATE INDEX devices_by_seq ON devices(seq);

-- Reactions: no table references them, so the table is rebuilt WITHOUT ROWID with the toggle's
-- lookup (element, user, type) as its primary key: the toggle finds, inserts or deletes its row in
-- one B-tree, with no separate UNIQUE index to maintain. `id` stays unique (the API's reaction
-- id, the inspector's key); `seq` orders an element's reactions newest first.
CREATE TABLE reactions_v2 (
    element_id TEXT NOT NULL REFERENCES elements(id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    type       TEXT NOT NULL DEFAULT 'heart' CHECK (type = 'heart'),
    id         TEXT NOT NULL UNIQUE,
    seq        INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (element_id, user_id, type)
) WITHOUT ROWID;
INSERT INTO reactions_v2 (element_id, user_id, type, id, seq, created_at)
    SELECT element_id, user_id, type, id, rowid, created_at FROM reactions;
DROP TABLE reactions;
ALTER TABLE reactions_v2 RENAME TO reactions;
CREATE INDEX reactions_by_element_seq ON reactions(element_id, seq, user_id);
CREATE INDEX reactions_by_user ON reactions(user_id);
