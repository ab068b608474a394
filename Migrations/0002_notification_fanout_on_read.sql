-- Notifications cost O(1) rows per change, whatever the room size.
--
-- 0001 wrote one `notifications` row per member for every created element (99 rows in a
-- 100-member room), and the delivery worker rewrote each row to mark it delivered. Now:
--   * `room_notifications`: ONE row per created element; who sees it (members, except the actor,
--     who joined before it) is decided when it is listed or delivered;
--   * `notifications`: the personal ones (a reaction on your element), one row each;
--   * both keyed by a sequence (`seq`, AUTOINCREMENT: never reused, so sequential inserts and a
--     cursor that can never skip a row); delivery advances one cursor per table
--     (`notification_cursors`) instead of updating each row.
-- Rows of 0001 are carried over and count as delivered.

CREATE TABLE notifications_v2 (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    type       TEXT NOT NULL CHECK (type = 'element_reaction'),
    room_id    TEXT,
    element_id TEXT,
    actor_id   TEXT,
    created_at INTEGER NOT NULL
);
INSERT INTO notifications_v2 (id, user_id, type, room_id, element_id, actor_id, created_at)
    SELECT id, user_id, type, room_id, element_id, actor_id, created_at FROM notifications
    WHERE type = 'element_reaction' ORDER BY created_at, rowid;

CREATE TABLE room_notifications (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL,
    room_id    TEXT NOT NULL REFERENCES rooms(id) ON DELETE CASCADE,
    type       TEXT NOT NULL CHECK (type = 'element_created'),
    element_id TEXT,
    actor_id   TEXT,
    created_at INTEGER NOT NULL
);
INSERT INTO room_notifications (id, room_id, type, element_id, actor_id, created_at)
    SELECT MIN(id), room_id, 'element_created', element_id, actor_id, MIN(created_at) FROM notifications
    WHERE type = 'element_created' AND room_id IN (SELECT id FROM rooms)
    GROUP BY room_id, element_id, actor_id ORDER BY MIN(created_at);
CREATE INDEX room_notifications_by_room ON room_notifications(room_id, created_at);

DROP TABLE notifications;
ALTER TABLE notifications_v2 RENAME TO notifications;
CREATE INDEX notifications_by_user ON notifications(user_id, seq);

-- The highest `seq` of each table handed to the delivery backend ('user' → notifications,
-- 'room' → room_notifications). A missing row means 0.
CREATE TABLE notification_cursors (
    name          TEXT PRIMARY KEY CHECK (name IN ('user', 'room')),
    delivered_seq INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO notification_cursors (name, delivered_seq) VALUES
    ('user', (SELECT COALESCE(MAX(seq), 0) FROM notifications)),
    ('room', (SELECT COALESCE(MAX(seq), 0) FROM room_notifications));
