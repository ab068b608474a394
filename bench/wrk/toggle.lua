-- POST .../reactions/toggle: a random user of 1000 x a random element of 100 in the toggle room.
package.path = "bench/wrk/?.lua;" .. package.path
local c = require("common")
local tokens, elements, room

function init(args)
  c.seed()
  tokens = c.lines("tokens")
  elements = c.lines("toggle-elements")
  room = c.lines("toggle-room")[1]
end

function request()
  local path = "/api/rooms/" .. room .. "/elements/" .. elements[math.random(#elements)] .. "/reactions/toggle"
  return wrk.format("POST", path, { ["Authorization"] = "Bearer " .. tokens[math.random(#tokens)], ["Content-Length"] = "0" })
end

done = c.done
