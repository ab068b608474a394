-- A per-room event number (docs/realtime-cluster.md, "Order across nodes"): every write
-- transaction that produces events about a room adds their count to `event_seq` and numbers them
-- with the values it passed. The row stays locked until COMMIT, so on several nodes sharing the
-- database the numbers of one room follow its commit order; a transaction that rolls back gives
-- its numbers back. Each node delivers a room's events in number order.
ALTER TABLE rooms ADD COLUMN event_seq INTEGER NOT NULL DEFAULT 0;
