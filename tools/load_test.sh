#!/usr/bin/env bash
# Single-purpose load figures (docs/performance.md), on loopback only, bounded in time:
#   1. cache-hit latency through HTTP vs a miss on the cheap (language) path;
#   2. throughput with metrics and the audit log on vs off (cache off, so every request works);
#   3. RSS with 100,000 cached verdicts;
#   4. p99 under steady load without and with 20 admin reloads (reloads build off the workers).
# Needs: cargo build --release; wrk (apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release/guard
PORT=${PORT:-18080}
DUR=${DUR:-10s}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# A config copy with the cache off, to measure the work itself.
cp -r products wordlists judge_prompts models policies "$work/"
sed -i 's/^enabled = true/enabled = false/' "$work"/products/*.toml

start() { # dir, extra env...
  local dir=$1; shift
  env "$@" "$BIN" serve --listen "127.0.0.1:$PORT" --config-dir "$dir" >/dev/null 2>&1 &
  PID=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && return; sleep 0.1; done
  echo "server did not start" >&2; exit 1
}
stop() { kill "$PID"; wait "$PID" 2>/dev/null || true; }
body_script() { # text
  cat > "$work/body.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"product": "wallet-assistant", "text": "$1"}'
LUA
}
run_wrk() { wrk -t2 -c16 -d"$DUR" --latency -s "$1" "http://127.0.0.1:$PORT/v1/screen" | grep -E "Requests/sec|^ +50%|^ +99%"; }

echo "== 1. cache hit vs miss on the cheap path (audit off)"
body_script "Why was my card declined at the shop yesterday?"
start . GUARD_AUDIT_LOG=off
echo "-- hit (same English question, cached)"; run_wrk "$work/body.lua"
stop
body_script "amar card block kore den please"
start "$work" GUARD_AUDIT_LOG=off
echo "-- miss, Banglish rejected at stage 2, cache off"; run_wrk "$work/body.lua"
stop
body_script "Why was my card declined at the shop yesterday?"
start "$work" GUARD_AUDIT_LOG=off
echo "-- miss, English through the embedded guard, cache off"; run_wrk "$work/body.lua"
stop

echo "== 2. metrics and audit log on vs off (English, cache off)"
start "$work" GUARD_AUDIT_LOG="$work/audit.jsonl"
echo "-- on (metrics + audit to a file)"; run_wrk "$work/body.lua"
stop
start "$work" GUARD_AUDIT_LOG=off GUARD_METRICS=off
echo "-- off"; run_wrk "$work/body.lua"
stop

echo "== 3. RSS with 100,000 cached verdicts"
cat > "$work/unique.lua" <<'LUA'
local n = 0
local threads = 0
function setup(thread) thread:set("tid", threads); threads = threads + 1 end
request = function()
  n = n + 1
  local body = string.format('{"product": "wallet-assistant", "text": "how do I check my balance %d %d"}', tid, n)
  return wrk.format("POST", "/v1/screen", {["Content-Type"] = "application/json"}, body)
end
LUA
start . GUARD_AUDIT_LOG=off
echo "RSS at start: $(grep VmRSS /proc/$PID/status)"
wrk -t2 -c16 -d"${FILL_DUR:-30s}" -s "$work/unique.lua" "http://127.0.0.1:$PORT/v1/screen" | grep "Requests/sec"
curl -s "http://127.0.0.1:$PORT/metrics" | grep '^guard_cache_entries{product="wallet-assistant"}'
echo "RSS after:    $(grep VmRSS /proc/$PID/status)"
stop

echo "== 4. p99 under steady load, without and with 20 reloads (English, cache off)"
body_script "Why was my card declined at the shop yesterday?"
start "$work" GUARD_AUDIT_LOG=off GUARD_ADMIN_TOKEN=load-test-token
echo "-- no reloads"; wrk -t2 -c20 -d"${RELOAD_DUR:-20s}" --latency -s "$work/body.lua" "http://127.0.0.1:$PORT/v1/screen" | grep -E "Requests/sec|^ +50%|^ +99%"
( for _ in $(seq 20); do
    curl -s -o /dev/null -w "%{http_code} %{time_total}\n" -X POST \
      -H "Authorization: Bearer load-test-token" "http://127.0.0.1:$PORT/admin/reload" >> "$work/reloads.txt"
    sleep 0.8
  done ) &
RELOADER=$!
echo "-- 20 reloads during the run"; wrk -t2 -c20 -d"${RELOAD_DUR:-20s}" --latency -s "$work/body.lua" "http://127.0.0.1:$PORT/v1/screen" | grep -E "Requests/sec|^ +50%|^ +99%"
wait "$RELOADER" 2>/dev/null || true
echo "reloads answered 200: $(grep -c '^200' "$work/reloads.txt" || true) of 20; slowest: $(sort -k2 -n "$work/reloads.txt" | tail -1 | cut -d' ' -f2) s"
stop
