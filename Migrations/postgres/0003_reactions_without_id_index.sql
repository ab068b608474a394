-- The PostgreSQL twin of Migrations/0006_reactions_without_id_index.sql: one B-tree fewer per
-- heart toggle. The unique index on `reactions.id` served only lookups by id, and none needs it
-- (the reactions page's cursor has the element: the primary key finds it; the inspector's delete by
-- id scans, an operator's action; ids are server-made version-4 UUIDs). The indexes that serve
-- queries stay.
ALTER TABLE reactions DROP CONSTRAINT reactions_id_key;
