-- wrk script for the Solgate benchmark: POSTs one fixed JSON-RPC body and
-- prints one machine-readable "BENCH key=value ..." line when done.
--
-- Environment:
--   BENCH_BODY     file holding the request body (required; "GET" for a
--                  plain GET of the URL)
--   BENCH_HEADER   one extra "Name: value" request header (optional)
--   BENCH_EXPECT   a substring every response body must contain; when empty
--                  no response() hook is installed (wrk then does not hand
--                  bodies to Lua, which matters for 5 MB answers) and only
--                  the HTTP status is checked

local path = os.getenv("BENCH_BODY")
if path ~= "GET" then
  local file = assert(io.open(path or "", "rb"), "BENCH_BODY must name a readable file")
  local request_body = file:read("*a")
  file:close()
  wrk.method = "POST"
  wrk.body = request_body
  wrk.headers["Content-Type"] = "application/json"
end

local extra = os.getenv("BENCH_HEADER") or ""
local name, value = string.match(extra, "^([^:]+):%s*(.*)$")
if name then
  wrk.headers[name] = value
end

local expect = os.getenv("BENCH_EXPECT") or ""

-- Per-thread state (each wrk thread runs this file in its own Lua state).
bad = 0
first_bad = ""

if expect ~= "" then
  function response(status, headers, body)
    if status ~= 200 or not string.find(body, expect, 1, true) then
      bad = bad + 1
      if first_bad == "" then
        first_bad = status .. " " .. string.sub(body, 1, 200)
      end
    end
  end
end

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function done(summary, latency, requests)
  local nbad, sample = 0, ""
  for _, t in ipairs(threads) do
    nbad = nbad + (tonumber(t:get("bad")) or 0)
    local s = t:get("first_bad")
    if sample == "" and s and s ~= "" then sample = s end
  end
  local e = summary.errors
  io.write(string.format(
    "BENCH requests=%d duration_us=%d bytes=%d p50_us=%d p99_us=%d max_us=%d " ..
    "err_connect=%d err_read=%d err_write=%d err_status=%d err_timeout=%d bad_body=%d\n",
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50.0), latency:percentile(99.0), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout, nbad))
  if sample ~= "" then
    -- one line, no newlines inside, for the log
    io.write("BENCH_FIRST_BAD " .. string.gsub(sample, "[\r\n]", " ") .. "\n")
  end
end
