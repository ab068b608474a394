-- GET /api/rooms/my-rooms for the seeded user who is a member of 50 rooms (with elements and messages).
package.path = "bench/wrk/?.lua;" .. package.path
local c = require("common")
local token

function init(args)
  token = c.lines("roomy-token")[1]
end

function request()
  return wrk.format("GET", "/api/rooms/my-rooms", { ["Authorization"] = "Bearer " .. token })
end

done = c.done
