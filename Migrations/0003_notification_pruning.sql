-- Pruning of delivered notifications (bounded feeds): the per-feed cap finds the newest N rows
-- of one room's feed and deletes the older ones in `seq` order. (room_id, seq) serves both
-- without sorting the room's rows; the personal feed already has notifications_by_user(user_id, seq).
CREATE INDEX room_notifications_by_room_seq ON room_notifications(room_id, seq);
