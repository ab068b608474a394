-- TouchSync schema v1. Times are Unix seconds (UTC); the API renders them as ISO 8601.
-- Counters (rooms.element_count, elements.reaction_count, posts.like_count/save_count and the
-- per-member unseen/unread badges) are kept in the same transaction as the change they count,
-- so that reads never COUNT(*) on a hot path.

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    username      TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    first_name    TEXT,
    avatar_url    TEXT,
    created_at    INTEGER NOT NULL
);

CREATE TABLE rooms (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    created_by       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    last_activity_at INTEGER NOT NULL,
    activity_seq     INTEGER NOT NULL DEFAULT 0,
    is_active        INTEGER NOT NULL DEFAULT 1,
    name_set_by      TEXT REFERENCES users(id) ON DELETE SET NULL,
    element_count    INTEGER NOT NULL DEFAULT 0
);

-- Each member's markers: when they last saw the elements / read the messages, and the badge
-- counters that grow with other users' creations after that marker (deletes never shrink them).
CREATE TABLE room_members (
    room_id          TEXT NOT NULL REFERENCES rooms(id) ON DELETE CASCADE,
    user_id          TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    joined_at        INTEGER NOT NULL,
    elements_seen_at INTEGER NOT NULL,
    messages_read_at INTEGER NOT NULL,
    unseen_elements  INTEGER NOT NULL DEFAULT 0,
    unread_messages  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (room_id, user_id)
) WITHOUT ROWID;
CREATE INDEX room_members_by_user ON room_members(user_id, room_id);

CREATE TABLE elements (
    id             TEXT PRIMARY KEY,
    room_id        TEXT NOT NULL REFERENCES rooms(id) ON DELETE CASCADE,
    type           TEXT NOT NULL CHECK (type IN ('note', 'photo', 'audio', 'video', 'text', 'link')),
    position_x     REAL NOT NULL,
    position_y     REAL NOT NULL,
    width          REAL NOT NULL,
    height         REAL NOT NULL,
    created_by     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    content        TEXT,
    image_url      TEXT,
    audio_url      TEXT,
    video_url      TEXT,
    thumbnail_url  TEXT,
    duration       REAL,
    reaction_count INTEGER NOT NULL DEFAULT 0,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);
-- rowid is the creation order: (room_id) plus the implicit rowid serves "oldest first".
CREATE INDEX elements_by_room ON elements(room_id);

CREATE TABLE reactions (
    id         TEXT PRIMARY KEY,
    element_id TEXT NOT NULL REFERENCES elements(id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    type       TEXT NOT NULL DEFAULT 'heart' CHECK (type = 'heart'),
    created_at INTEGER NOT NULL,
    UNIQUE (element_id, user_id, type)
);
-- Newest first per element: (element_id, created_at) with the implicit rowid as tie-breaker.
CREATE INDEX reactions_by_element_time ON reactions(element_id, created_at);
CREATE INDEX reactions_by_user ON reactions(user_id);

CREATE TABLE messages (
    id         TEXT PRIMARY KEY,
    room_id    TEXT NOT NULL REFERENCES rooms(id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    text       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX messages_by_room_time ON messages(room_id, created_at);
CREATE INDEX messages_by_user ON messages(user_id);

CREATE TABLE posts (
    id         TEXT PRIMARY KEY,
    author_id  TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    content    TEXT NOT NULL,
    image_url  TEXT,
    like_count INTEGER NOT NULL DEFAULT 0,
    save_count INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);
CREATE INDEX posts_by_author ON posts(author_id);

CREATE TABLE post_likes (
    post_id    TEXT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (post_id, user_id)
) WITHOUT ROWID;
CREATE INDEX post_likes_by_user ON post_likes(user_id);

CREATE TABLE post_saves (
    post_id    TEXT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (post_id, user_id)
) WITHOUT ROWID;
CREATE INDEX post_saves_by_user ON post_saves(user_id);

CREATE TABLE devices (
    token      TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    platform   TEXT NOT NULL CHECK (platform IN ('ios', 'android')),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX devices_by_user ON devices(user_id);

-- room_id/element_id are plain references: a notification outlives the element it mentions.
CREATE TABLE notifications (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    type         TEXT NOT NULL CHECK (type IN ('element_reaction', 'element_created')),
    room_id      TEXT,
    element_id   TEXT,
    actor_id     TEXT,
    created_at   INTEGER NOT NULL,
    delivered_at INTEGER
);
CREATE INDEX notifications_by_user ON notifications(user_id, created_at);
CREATE INDEX notifications_undelivered ON notifications(created_at) WHERE delivered_at IS NULL;
