-- A viewer's like and save of a post in one row keyed (post, user), instead of one row in each of
-- two tables. interaction-state answers "has the viewer liked / saved each of these 50 posts": with
-- two tables that is two B-tree seeks per found post, with one table it is one, and the row carries
-- both answers (bench/RESULTS.md, "Read paths, round 5": about 4,000 instructions per found post,
-- most of them the seeks).
--
-- `liked_at` / `saved_at` are the times the like / the save was made (the old tables' `created_at`),
-- NULL when there is none. The transaction that clears the last of the two deletes the row
-- (PostService.set), so a row exists when the viewer has liked or saved the post; a CHECK cannot
-- say so, since clearing is an UPDATE and then the DELETE. Cascades as before: the post's or the
-- user's deletion removes the row.
--
-- Every existing like and save is carried over with its time; a (post, user) pair in both tables
-- becomes one row with both times.
CREATE TABLE post_interactions (
    post_id  TEXT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
    user_id  TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    liked_at INTEGER,
    saved_at INTEGER,
    PRIMARY KEY (post_id, user_id)
) WITHOUT ROWID;
INSERT INTO post_interactions (post_id, user_id, liked_at, saved_at)
    SELECT post_id, user_id, max(liked_at), max(saved_at) FROM (
        SELECT post_id, user_id, created_at AS liked_at, NULL AS saved_at FROM post_likes
        UNION ALL
        SELECT post_id, user_id, NULL, created_at FROM post_saves
    ) GROUP BY post_id, user_id;
DROP TABLE post_likes;
DROP TABLE post_saves;
-- A user's likes and saves (account deletion and export).
CREATE INDEX post_interactions_by_user ON post_interactions(user_id);
