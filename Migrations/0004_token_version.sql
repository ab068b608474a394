-- Per-user token version, so that logout revokes tokens: every access token carries the version of its user
-- at issue time (JWT claim `ver`, absent = 0), and verification compares it with this column in
-- the same query that already loads the caller. POST /api/auth/logout increments it, which
-- revokes every token issued before; POST /api/auth/refresh issues a fresh token at the current
-- version.
ALTER TABLE users ADD COLUMN token_version INTEGER NOT NULL DEFAULT 0;
