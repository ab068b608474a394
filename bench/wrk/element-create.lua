-- POST /api/rooms/:roomId/elements (a note) in the create room, as a random one of its 100 members.
package.path = "bench/wrk/?.lua;" .. package.path
local c = require("common")
local tokens, room
local body = '{"type":"note","content":"bench","positionX":10,"positionY":20,"width":100,"height":80}'

function init(args)
  c.seed()
  tokens = c.lines("member-tokens")
  -- CREATE_ROOM overrides the room (e.g. a one-member room, to separate per-member costs).
  room = os.getenv("CREATE_ROOM") or c.lines("create-room")[1]
  if os.getenv("CREATE_ROOM") then tokens = { c.lines("tokens")[1] } end  -- its creator, user 0
end

function request()
  return wrk.format("POST", "/api/rooms/" .. room .. "/elements",
    { ["Authorization"] = "Bearer " .. tokens[math.random(#tokens)], ["Content-Type"] = "application/json" }, body)
end

done = c.done
