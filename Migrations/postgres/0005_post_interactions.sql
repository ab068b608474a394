-- The PostgreSQL twin of Migrations/0008_post_interactions.sql: a viewer's like and save of a post
-- in one row keyed (post, user), so interaction-state seeks one index per found post instead of
-- two. `liked_at` / `saved_at` are the old rows' `created_at`, NULL when there is none; the
-- transaction that clears the last of the two deletes the row (PostService.set). Every existing
-- like and save is carried over with its time; a pair in both tables becomes one row with both.
CREATE TABLE post_interactions (
    post_id  TEXT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
    user_id  TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    liked_at BIGINT,
    saved_at BIGINT,
    PRIMARY KEY (post_id, user_id)
);
INSERT INTO post_interactions (post_id, user_id, liked_at, saved_at)
    SELECT post_id, user_id, max(liked_at), max(saved_at) FROM (
        SELECT post_id, user_id, created_at AS liked_at, NULL::BIGINT AS saved_at FROM post_likes
        UNION ALL
        SELECT post_id, user_id, NULL::BIGINT, created_at FROM post_saves
    ) AS both_kinds GROUP BY post_id, user_id;
DROP TABLE post_likes;
DROP TABLE post_saves;
CREATE INDEX post_interactions_by_user ON post_interactions(user_id);
