-- GET /health (no auth).
package.path = "bench/wrk/?.lua;" .. package.path
local c = require("common")
wrk.method = "GET"
wrk.path = "/health"
done = c.done
