-- Shared by the wrk scripts of bench/README.md: loads the ids and tokens written by
-- `touchsync bench-seed` (directory $BENCH_DATA, default bench/.data) and prints a RESULT line.
local M = {}

function M.lines(name)
  local dir = os.getenv("BENCH_DATA") or "bench/.data"
  local t = {}
  for l in io.lines(dir .. "/" .. name .. ".txt") do
    if #l > 0 then t[#t + 1] = l end
  end
  return t
end

function M.seed()
  -- Each wrk thread has its own Lua state; seed differently per thread.
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 100000)
end

function M.done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local e = summary.errors
  local errors = e.connect + e.read + e.write + e.timeout + e.status
  io.write(string.format('RESULT {"rps": %.1f, "p50_ms": %.3f, "p90_ms": %.3f, "p99_ms": %.3f, "max_ms": %.3f, "requests": %d, "errors": %d, "non2xx": %d}\n',
    summary.requests / seconds, latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, summary.requests, errors, e.status))
end

return M
