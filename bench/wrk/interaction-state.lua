-- POST /api/mobile/posts/interaction-state with 50 post ids, as a random user of 1000.
package.path = "bench/wrk/?.lua;" .. package.path
local c = require("common")
local tokens, body

function init(args)
  c.seed()
  tokens = c.lines("tokens")
  local ids = c.lines("post-ids")
  body = '{"postIds":["' .. table.concat(ids, '","') .. '"]}'
end

function request()
  return wrk.format("POST", "/api/mobile/posts/interaction-state",
    { ["Authorization"] = "Bearer " .. tokens[math.random(#tokens)], ["Content-Type"] = "application/json" }, body)
end

done = c.done
