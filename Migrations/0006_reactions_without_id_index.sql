-- One B-tree fewer per heart toggle. A toggle adds or removes one `reactions` row, and every index
-- of the table is one more B-tree to change and one more WAL frame to write, sync and copy back at
-- the next checkpoint (bench/RESULTS.md "Toggle: checkpoints off the writer").
--
-- The `UNIQUE` on `reactions.id` kept a whole B-tree only for lookups by id, and none needs it:
--   * the reactions page's cursor (`WHERE id = ? AND element_id = ?`) searches the primary key by
--     `element_id`, reading that one element's hearts;
--   * the inspector deletes a reaction by id (a whole-table scan now: an operator's action);
--   * ids are version-4 UUIDs made by the server (122 random bits), so the constraint was never
--     what kept them apart.
-- `reactions_by_element_seq` (an element's hearts, newest first; the top reactors) and
-- `reactions_by_user` (a member's hearts in one room for `room:join` and the element list, and an
-- account's deletion and export) stay: each serves a query.
--
-- SQLite cannot drop a column constraint, so the table is rebuilt as in 0005 (no other table
-- references it).
CREATE TABLE reactions_v3 (
    element_id TEXT NOT NULL REFERENCES elements(id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    type       TEXT NOT NULL DEFAULT 'heart' CHECK (type = 'heart'),
    id         TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (element_id, user_id, type)
) WITHOUT ROWID;
INSERT INTO reactions_v3 (element_id, user_id, type, id, seq, created_at)
    SELECT element_id, user_id, type, id, seq, created_at FROM reactions;
DROP TABLE reactions;
ALTER TABLE reactions_v3 RENAME TO reactions;
CREATE INDEX reactions_by_element_seq ON reactions(element_id, seq, user_id);
CREATE INDEX reactions_by_user ON reactions(user_id);
