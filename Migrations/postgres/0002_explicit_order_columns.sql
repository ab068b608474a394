-- The PostgreSQL twin of Migrations/0005_explicit_order_columns.sql (listings in creation
-- order, and a fast toggle): an explicit creation-order column `seq` where SQLite used its
-- implicit rowid, and a reactions table keyed for the toggle's lookup.
--
-- `seq` is app-assigned (TSDomain's SequenceSource: the wall clock in microseconds, strictly
-- increasing per process); listings order by (seq, id). Rows that exist before this migration
-- are numbered in their (created_at, id) order, which keeps them ahead of every new value.
-- `<table>_by_seq` indexes serve the inspector's keyset pages and the export, in creation order.
-- Tables other tables reference with ON DELETE CASCADE only get a column.

ALTER TABLE users ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
UPDATE users SET seq = o.n FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY created_at, id) AS n FROM users) o WHERE o.id = users.id;
CREATE INDEX users_by_seq ON users(seq);

ALTER TABLE rooms ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
UPDATE rooms SET seq = o.n FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY created_at, id) AS n FROM rooms) o WHERE o.id = rooms.id;
CREATE INDEX rooms_by_seq ON rooms(seq);

ALTER TABLE elements ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
UPDATE elements SET seq = o.n FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY created_at, id) AS n FROM elements) o WHERE o.id = elements.id;
CREATE INDEX elements_by_room_seq ON elements(room_id, seq, id);
DROP INDEX IF EXISTS elements_by_room;

ALTER TABLE messages ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
UPDATE messages SET seq = o.n FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY created_at, id) AS n FROM messages) o WHERE o.id = messages.id;
CREATE INDEX messages_by_room_seq ON messages(room_id, seq, id);
DROP INDEX IF EXISTS messages_by_room_time;

ALTER TABLE posts ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
UPDATE posts SET seq = o.n FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY created_at, id) AS n FROM posts) o WHERE o.id = posts.id;
CREATE INDEX posts_by_seq ON posts(seq);

ALTER TABLE devices ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
UPDATE devices SET seq = o.n FROM (SELECT token, ROW_NUMBER() OVER (ORDER BY created_at, token) AS n FROM devices) o WHERE o.token = devices.token;
CREATE INDEX devices_by_seq ON devices(seq);

-- Reactions have no children: rebuilt with the toggle's lookup (element, user, type) as the
-- primary key (the row lock the toggle needs is on the element, see ReactionService), `id`
-- unique, `seq` for newest first.
CREATE TABLE reactions_v2 (
    element_id TEXT NOT NULL REFERENCES elements(id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    type       TEXT NOT NULL DEFAULT 'heart' CHECK (type = 'heart'),
    id         TEXT NOT NULL UNIQUE,
    seq        BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (element_id, user_id, type)
);
INSERT INTO reactions_v2 (element_id, user_id, type, id, seq, created_at)
    SELECT element_id, user_id, type, id, ROW_NUMBER() OVER (ORDER BY created_at, id), created_at FROM reactions;
DROP TABLE reactions;
ALTER TABLE reactions_v2 RENAME TO reactions;
CREATE INDEX reactions_by_element_seq ON reactions(element_id, seq, user_id);
CREATE INDEX reactions_by_user ON reactions(user_id);
ALTER TABLE reactions RENAME CONSTRAINT reactions_v2_pkey TO reactions_pkey;
ALTER TABLE reactions RENAME CONSTRAINT reactions_v2_id_key TO reactions_id_key;
ALTER TABLE reactions RENAME CONSTRAINT reactions_v2_type_check TO reactions_type_check;
ALTER TABLE reactions RENAME CONSTRAINT reactions_v2_element_id_fkey TO reactions_element_id_fkey;
ALTER TABLE reactions RENAME CONSTRAINT reactions_v2_user_id_fkey TO reactions_user_id_fkey;
