-- The PostgreSQL twin of Migrations/0007_room_event_numbers.sql: a per-room event number,
-- advanced by every write transaction that produces events about the room. The UPDATE locks the
-- room's row until COMMIT, so the numbers of one room follow the commit order of every node
-- writing to it (docs/realtime-cluster.md, "Order across nodes").
ALTER TABLE rooms ADD COLUMN event_seq BIGINT NOT NULL DEFAULT 0;
