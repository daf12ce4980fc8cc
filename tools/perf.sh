#!/usr/bin/env bash
# The performance figures of docs/performance.md, in one run, on loopback only (wrk from Debian):
#   1. the ceiling: a bare actix-web JSON echo (examples/load_servers.rs, same crate versions);
#   2. the cheap path: `guard serve` with the shipped configuration (metrics on, audit log to a
#      file), a mix of questions the language screen rejects and cached verdicts;
#   3. the model path: every question reaches a Rust mock guard model that answers after exactly
#      20 ms, at 64 and 256 connections, with the mock's own latency measured the same way;
#   4. RSS: idle, peak under the 256-connection model-path load, with 100,000 cached verdicts;
#   5. start-up to ready; 6. `guard screen --jsonl` over the development split vs pycld2;
#   7. the gateway adapters against the native route: the same questions through
#      /v1/screen and through LiteLLM's, NeMo's and the webhook's contracts, one guard, in turn
#      (and /v1/screen with LiteLLM's whole body beside its own fields: what the bytes cost).
# Usage: tools/perf.sh            (DUR=10s per wrk run; ROUNDS=3 rounds of 1 + 2, medians
#        reported; SKIP_JSONL=1 skips 6; ONLY="1 3" runs only those sections; WORKERS=N gives
#        the guard N workers, and the echo is measured at its default and at the guard's count)
# At the end the results table between `<!-- perf:begin -->` and `<!-- perf:end -->` in
# docs/performance.md is rewritten: the rows this run measured are replaced (each row says when
# and how it was measured), the others are kept. PERF_DOC=FILE writes another file instead;
# PERF_DOC=- writes none.
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${DUR:-10s}
ONLY=${ONLY:-"1 3 4 5 6 7"}
WORKERS=${WORKERS:-}
GW=(); [ -n "$WORKERS" ] && GW=(--workers "$WORKERS")
want() { [[ " $ONLY " == *" $1 "* ]]; }
PERF_DOC=${PERF_DOC:-docs/performance.md}
# Check the table's markers before spending minutes measuring.
if [ "$PERF_DOC" != "-" ] && ! { grep -q '^<!-- perf:begin -->$' "$PERF_DOC" && grep -q '^<!-- perf:end -->$' "$PERF_DOC"; }; then
  echo "$PERF_DOC has no <!-- perf:begin --> / <!-- perf:end --> lines (PERF_DOC=- to skip the table)" >&2; exit 1
fi
# GUARD_BIN=FILE measures another build of guard (the one before a change) with the same
# script; nothing is built then (sections 1 and 3 need the example built before).
[ -z "${GUARD_BIN:-}" ] && cargo build --release --bin guard --example load_servers 2>&1 | tail -1
BIN=${GUARD_BIN:-target/release/guard}
LS=target/release/examples/load_servers
# Fixed by default; P_GUARD, P_ECHO, P_MOCK choose others (another run may hold these).
P_GUARD=${P_GUARD:-18180} P_ECHO=${P_ECHO:-18190} P_MOCK=${P_MOCK:-18191}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
# `fact NAME VALUE`: one measured value for the results table (written at the end).
fact() { printf '%s %s\n' "$1" "$2" >> "$work/facts"; }
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)"; exit 1; }

wait_port() { for _ in $(seq 300); do (echo > /dev/tcp/127.0.0.1/$1) 2>/dev/null && return; sleep 0.02; done; echo "port $1 never opened" >&2; exit 1; }
wait_ready() { for _ in $(seq 300); do curl -sf "http://127.0.0.1:$P_GUARD/readyz" >/dev/null && return; sleep 0.02; done; echo "guard never ready" >&2; exit 1; }
rss() { awk '/^VmRSS/ {printf "%.1f MB", $2/1024}' /proc/$1/status; }
hwm() { awk '/^VmHWM/ {printf "%.1f MB", $2/1024}' /proc/$1/status; }
mb() { echo "${1% MB}"; }
# wrk → "rps p50 p99" (latencies in ms)
measure() { # connections script url
  wrk -t2 -c"$1" -d"$DUR" --latency -s "$2" "$3" > "$work/wrk.txt"
  awk '
    function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
    /Requests\/sec/ {rps=$2} /^ +50%/ {p50=ms($2)} /^ +99%/ {p99=ms($2)}
    /Non-2xx/ {bad=$NF}
    END {printf "%.0f %.3f %.3f %s\n", rps, p50, p99, (bad==""?0:bad)}' "$work/wrk.txt"
}

cat > "$work/echo.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"product": "wallet-assistant", "text": "amar card block kore den please"}'
LUA
# The cheap path: rejected by the language screen (Banglish, other scripts, other Latin
# languages) and questions answered from the cache, in turn.
cat > "$work/cheap.lua" <<'LUA'
local bodies = {
  '{"product": "wallet-assistant", "text": "amar card block kore den please"}',
  '{"product": "wallet-assistant", "text": "Why was my card declined at the shop yesterday?"}',
  '{"product": "wallet-assistant", "text": "bkash e taka pathate koto charge lage"}',
  '{"product": "wallet-assistant", "text": "मेरा बैलेंस कितना है"}',
  '{"product": "bank-operator", "text": "How do I reset a customer PIN after three failed attempts?"}',
  '{"product": "wallet-assistant", "text": "¿Cuál es mi saldo?"}',
  '{"product": "wallet-assistant", "text": "আমার ব্যালেন্স কত?"}',
  '{"product": "wallet-assistant", "text": "ami amar pin bhule gechi ki korbo"}',
}
local i = 0
request = function()
  i = i % #bodies + 1
  return wrk.format("POST", "/v1/screen", {["Content-Type"] = "application/json"}, bodies[i])
end
LUA
# The model path: unique English questions (no cache hit), every one to the mock model.
cat > "$work/model.lua" <<'LUA'
local n, threads = 0, 0
function setup(thread) thread:set("tid", threads); threads = threads + 1 end
request = function()
  n = n + 1
  local body = string.format('{"product": "wallet-assistant", "text": "How do I see the fee for transfer %d-%d?"}', tid, n)
  return wrk.format("POST", "/v1/screen", {["Content-Type"] = "application/json"}, body)
end
LUA
cat > "$work/mock.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model": "lg", "messages": [{"role": "user", "content": "hi"}]}'
LUA

if want 1; then
# On a small shared machine one wrk run of each can differ by 10 % from the next, so the three
# servers are measured in turn, ROUNDS times, and the medians are compared. The echo is measured
# at actix's default workers and at the guard's worker count (2 per core unless WORKERS is set).
ROUNDS=${ROUNDS:-3}
GWN=${WORKERS:-$(( $(nproc) * 2 ))}
echo "== 1 + 2. ceiling (echo) and cheap path, 64 connections, $DUR each, $ROUNDS rounds"
for r in $(seq "$ROUNDS"); do
  "$LS" echo 127.0.0.1:$P_ECHO & ECHO=$!; wait_port $P_ECHO
  measure 64 "$work/echo.lua" "http://127.0.0.1:$P_ECHO/v1/screen" >> "$work/echo_default"
  kill $ECHO; wait $ECHO 2>/dev/null || true
  WORKERS=$GWN "$LS" echo 127.0.0.1:$P_ECHO & ECHO=$!; wait_port $P_ECHO
  measure 64 "$work/echo.lua" "http://127.0.0.1:$P_ECHO/v1/screen" >> "$work/echo_same"
  kill $ECHO; wait $ECHO 2>/dev/null || true
  GUARD_AUDIT_LOG="$work/audit.jsonl" "$BIN" serve --listen 127.0.0.1:$P_GUARD "${GW[@]}" >/dev/null 2>&1 & G=$!; wait_ready
  [ "$r" = 1 ] && idle=$(rss $G)
  measure 64 "$work/cheap.lua" "http://127.0.0.1:$P_GUARD/v1/screen" >> "$work/cheap"
  kill $G; wait $G 2>/dev/null || true
  rm -f "$work/audit.jsonl"
done
# the median row (by req/s) of a file of "rps p50 p99 non2xx" rows
median() { sort -n "$1" | awk '{row[NR]=$0} END {print row[int((NR+1)/2)]}'; }
read -r e_rps e_p50 e_p99 _ < <(median "$work/echo_default")
read -r ew_rps _ < <(median "$work/echo_same")
read -r c_rps c_p50 c_p99 _ < <(median "$work/cheap")
c_bad=$(awk '{s+=$4} END {print s+0}' "$work/cheap")
echo "rounds (req/s): echo $(cut -d' ' -f1 "$work/echo_default" | xargs) | echo at $GWN workers $(cut -d' ' -f1 "$work/echo_same" | xargs) | guard $(cut -d' ' -f1 "$work/cheap" | xargs)"
echo "echo ceiling:  $e_rps req/s  p50 $e_p50 ms  p99 $e_p99 ms  (median)"
echo "cheap path:    $c_rps req/s  p50 $c_p50 ms  p99 $c_p99 ms  (median; non-2xx in all rounds: $c_bad)"
awk -v c="$c_rps" -v e="$e_rps" 'BEGIN {printf "ratio cheap / ceiling: %.2f\n", c/e}'
echo "echo ceiling with $GWN workers, as the guard: $ew_rps req/s (median)"
awk -v c="$c_rps" -v e="$ew_rps" -v w="$GWN" 'BEGIN {printf "ratio cheap / ceiling at %s workers each: %.2f\n", w, c/e}'
fact rounds "$ROUNDS"; fact echo_rps "$e_rps"; fact echo_same_rps "$ew_rps"
fact cheap_rps "$c_rps"; fact cheap_bad "$c_bad"; fact idle_mb "$(mb "$idle")"
fi

if want 3; then
echo "== 3. model path: mock guard answering after 20 ms, cache off, $DUR each"
cp -r products wordlists judge_prompts models policies "$work/"
for f in "$work"/products/*.toml; do
  sed -i 's/^enabled = true/enabled = false/' "$f"
  python3 - "$f" "$P_MOCK" <<'PY'
import re, sys
path, port = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
table = (f'[guard]\nkind = "llama_guard_3"\nurl = "http://127.0.0.1:{port}/v1"\nmodel = "lg"\n'
         'timeout_ms = 2000\nmax_concurrent = 1024\n')
text = re.sub(r"\[guard\]\n(?:(?!\n\[).)*", table.rstrip("\n"), text, count=1, flags=re.S)
open(path, "w", encoding="utf-8").write(text)
PY
done
"$LS" mock-guard 127.0.0.1:$P_MOCK 20 & MOCK=$!; wait_port $P_MOCK
GUARD_AUDIT_LOG="$work/audit2.jsonl" GUARD_MAX_IN_FLIGHT=4096 "$BIN" serve --listen 127.0.0.1:$P_GUARD --config-dir "$work" "${GW[@]}" >/dev/null 2>&1 & G=$!; wait_ready
for c in 64 256; do
  read -r m_rps m_p50 m_p99 _ < <(measure $c "$work/mock.lua" "http://127.0.0.1:$P_MOCK/v1/chat/completions")
  read -r g_rps g_p50 g_p99 g_bad < <(measure $c "$work/model.lua" "http://127.0.0.1:$P_GUARD/v1/screen")
  echo "$c connections: mock alone p50 $m_p50 ms p99 $m_p99 ms | through guard $g_rps req/s p50 $g_p50 ms p99 $g_p99 ms (non-2xx: $g_bad)"
  awk -v a="$g_p50" -v b="$g_p99" -v ma="$m_p50" -v mb="$m_p99" 'BEGIN {printf "   added by the guard: p50 %.2f ms, p99 %.2f ms (over the mock measured alone); over the 20 ms: p50 %.2f ms, p99 %.2f ms\n", a-ma, b-mb, a-20, b-20}'
  fact "model${c}_rps" "$g_rps"; fact "model${c}_bad" "$g_bad"
  fact "model${c}_add_p50" "$(awk -v a="$g_p50" -v m="$m_p50" 'BEGIN {printf "%.2f", a-m}')"
  fact "model${c}_add_p99" "$(awk -v a="$g_p99" -v m="$m_p99" 'BEGIN {printf "%.2f", a-m}')"
done
allowed=$(grep -c '"decision":"allow"' "$work/audit2.jsonl" || true)
echo "   verdicts allowed by the mock model in the audit log: $allowed"
peak=$(hwm $G)
echo "RSS: idle after start ${idle:-(not measured)}; peak under the model-path load $peak"
fact peak_mb "$(mb "$peak")"
kill $G $MOCK; wait $G $MOCK 2>/dev/null || true

fi

if want 4; then
echo "== 4. RSS with 100,000 cached verdicts (shipped config, unique questions)"
cat > "$work/fill.lua" <<'LUA'
local n, threads = 0, 0
function setup(thread) thread:set("tid", threads); threads = threads + 1 end
request = function()
  n = n + 1
  if n > 50000 then wrk.thread:stop() end
  local body = string.format('{"product": "wallet-assistant", "text": "how do I check my balance %d %d"}', tid, n)
  return wrk.format("POST", "/v1/screen", {["Content-Type"] = "application/json"}, body)
end
LUA
GUARD_AUDIT_LOG=off "$BIN" serve --listen 127.0.0.1:$P_GUARD "${GW[@]}" >/dev/null 2>&1 & G=$!; wait_ready
wrk -t2 -c16 -d120s -s "$work/fill.lua" "http://127.0.0.1:$P_GUARD/v1/screen" > /dev/null
entries=$(curl -s "http://127.0.0.1:$P_GUARD/metrics" | awk '/^guard_cache_entries\{product="wallet-assistant"\}/ {print $2}')
cached=$(rss $G)
echo "cached verdicts: $entries; RSS $cached (peak $(hwm $G))"
fact cached_entries "$entries"; fact cached_mb "$(mb "$cached")"
kill $G; wait $G 2>/dev/null || true

fi

if want 5; then
echo "== 5. start-up to ready, both products"
python3 tools/startup_time.py --runs 15 --binary "$BIN" | tee "$work/startup.txt"
# "start-up to ready: median 23 ms (min 20, max 31, 15 runs)"
fact startup_ms "$(awk '{print $5}' "$work/startup.txt")"
fi

if want 6 && [ -z "${SKIP_JSONL:-}" ]; then
  echo "== 6. guard screen --jsonl over the development split, whole process, vs pycld2"
  python3 tools/eval_language.py --detectors pycld2 | tail -2 | tee "$work/jsonl.txt"
  # "wall time (s)   <guard>   <pycld2>" and "guard / fastest detector (pycld2) whole-process
  # time ratio: 0.820  rows=10155" (neither when pycld2 is not installed: no row then)
  if grep -q 'time ratio' "$work/jsonl.txt"; then
    fact jsonl_guard_s "$(awk '/^wall time/ {print $4}' "$work/jsonl.txt")"
    fact jsonl_pycld2_s "$(awk '/^wall time/ {print $5}' "$work/jsonl.txt")"
    fact jsonl_ratio "$(sed -n 's/.*time ratio: \([0-9.]*\).*/\1/p' "$work/jsonl.txt")"
    fact jsonl_rows "$(sed -n 's/.*rows=\([0-9]*\).*/\1/p' "$work/jsonl.txt")"
  fi
fi

if want 7; then
ROUNDS=${ROUNDS:-3}
echo "== 7. gateway adapters against the native route, 64 connections, $DUR each, $ROUNDS rounds"
# The cheap path's questions (language rejections and cached verdicts), each sent as the
# native body and as each contract's body. LiteLLM's "full" body is what LiteLLM 1.108 sends
# (every field, a system message, key metadata, forwarded headers); its "minimal" body has only
# what guard reads, so the two tell the adapter's own work from reading a larger body.
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
qs = [("wallet-assistant", "amar card block kore den please"),
      ("wallet-assistant", "Why was my card declined at the shop yesterday?"),
      ("wallet-assistant", "bkash e taka pathate koto charge lage"),
      ("wallet-assistant", "मेरा बैलेंस कितना है"),
      ("bank-operator", "How do I reset a customer PIN after three failed attempts?"),
      ("wallet-assistant", "¿Cuál es mi saldo?"),
      ("wallet-assistant", "আমার ব্যালেন্স কত?"),
      ("wallet-assistant", "ami amar pin bhule gechi ki korbo")]
system = {"role": "system", "content": "You are the wallet's assistant. Answer briefly and politely."}
def litellm(p, q, full):
    body = {"input_type": "request", "structured_messages": [{"role": "user", "content": q}],
            "additional_provider_specific_params": {"product": p}}
    if full:
        body.update({"litellm_call_id": "1d333c7b-6a4f-4b5e-9c1e-1f2a3b4c5d6e", "litellm_trace_id": "16073fa6-2b3c-4d5e-8f90-a1b2c3d4e5f6",
                     "structured_messages": [system, {"role": "user", "content": q}], "texts": [system["content"], q],
                     "images": None, "tools": None, "tool_calls": None, "model": "mock-bank", "litellm_version": "1.108.7",
                     "request_data": {"user_api_key_hash": "litellm_proxy_master_key", "user_api_key_user_id": "default_user_id",
                                      "user_api_key_end_user_id": "customer-42"},
                     "request_headers": {"host": "127.0.0.1:4000", "content-type": "application/json", "user-agent": "OpenAI/Python 1.99.0",
                                         "accept": "application/json", "x-stainless-lang": "python", "authorization": "[present]"}})
    return body
routes = {
    "native": ("/v1/screen", {}, lambda p, q: {"product": p, "text": q}),
    "litellm_min": ("/beta/litellm_basic_guardrail_api", {}, lambda p, q: litellm(p, q, False)),
    "litellm": ("/beta/litellm_basic_guardrail_api", {}, lambda p, q: litellm(p, q, True)),
    "nemo": ("/v1/guardrail/checks", {}, lambda p, q: {"model": "m", "messages": [system, {"role": "user", "content": q}], "guardrails": {"config_id": p}}),
    "webhook": ("/request", None, lambda p, q: {"body": {"messages": [system, {"role": "user", "content": q}]}}),
}
# A control: the native body with every other field of LiteLLM's full body beside it, which
# /v1/screen reads past. It costs what sending and scanning those bytes costs, without an adapter.
def native_full(p, q):
    body = litellm(p, q, True)
    body.update({"product": p, "text": q})
    return body
routes["native_full"] = ("/v1/screen", {}, native_full)
lua_str = lambda s: "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"
for name, (path, _, make) in routes.items():
    # Built in init, once wrk knows the host: wrk.format at load time writes no Host header,
    # and every request is then a 400.
    lines = ["local reqs", "init = function(args)", "reqs = {"]
    for p, q in qs:
        headers = '{["Content-Type"] = "application/json"' + (f', ["x-guard-product"] = "{p}"' if name == "webhook" else "") + "}"
        lines.append(f'  wrk.format("POST", "{path}", {headers}, {lua_str(json.dumps(make(p, q), ensure_ascii=False))}),')
    lines += ["}", "end", "local i = 0", "request = function() i = i % #reqs + 1; return reqs[i] end"]
    open(f"{work}/gw_{name}.lua", "w", encoding="utf-8").write("\n".join(lines) + "\n")
PY
GUARD_AUDIT_LOG="$work/audit7.jsonl" "$BIN" serve --listen 127.0.0.1:$P_GUARD "${GW[@]}" >/dev/null 2>&1 & G=$!; wait_ready
GWROUTES="native native_full litellm_min litellm nemo webhook"
# Odd rounds in this order, even rounds in the reverse one, so that a load that comes and goes
# on a shared machine does not always fall on the same route.
GWREVERSED=$(echo $GWROUTES | tr ' ' '\n' | tac | xargs)
for r in $(seq "$ROUNDS"); do
  order=$GWROUTES; [ $((r % 2)) = 0 ] && order=$GWREVERSED
  for name in $order; do
    measure 64 "$work/gw_$name.lua" "http://127.0.0.1:$P_GUARD/" >> "$work/gw_$name"
  done
  : > "$work/audit7.jsonl"
done
kill $G; wait $G 2>/dev/null || true
median() { sort -n "$1" | awk '{row[NR]=$0} END {print row[int((NR+1)/2)]}'; }
read -r n_rps n_p50 _ < <(median "$work/gw_native")
echo "rounds (req/s): $(for name in $GWROUTES; do printf '%s %s | ' "$name" "$(cut -d' ' -f1 "$work/gw_$name" | xargs)"; done)"
for name in $GWROUTES; do
  read -r a_rps a_p50 a_p99 _ < <(median "$work/gw_$name")
  bad=$(awk '{s+=$4} END {print s+0}' "$work/gw_$name")
  awk -v n="$name" -v r="$a_rps" -v p="$a_p50" -v q="$a_p99" -v nr="$n_rps" -v np="$n_p50" -v b="$bad" \
    'BEGIN {printf "%-12s %7d req/s (%+.1f %%)  p50 %.3f ms (%+.3f)  p99 %.3f ms  non-2xx %s\n", n, r, (r/nr-1)*100, p, p-np, q, b}'
  fact "gw_${name}_rps" "$a_rps"; fact "gw_${name}_p50" "$a_p50"; fact "gw_${name}_bad" "$bad"
done
fact gw_rounds "$ROUNDS"
fi

if [ "$PERF_DOC" != "-" ] && [ -s "$work/facts" ]; then
  run="$(date -u +%F), $(nproc) cores, guard $([ -n "$WORKERS" ] && echo "$WORKERS" || echo $(( $(nproc) * 2 ))) workers, DUR=$DUR"
  python3 - "$PERF_DOC" "$work/facts" "$run" <<'PY'
# Rewrite the results table between the markers: one row per figure, the rows this run
# measured replaced, the others kept as they were.
import sys
doc, facts_file, run = sys.argv[1:]
f = dict(line.split(" ", 1) for line in open(facts_file).read().split("\n") if " " in line)
n = lambda k: float(f[k])
g = lambda v: f"{v:,.0f}"
has = lambda *ks: all(k in f for k in ks)
# (key, goal, measured, command): the key is the row's first cell and never changes.
rows = [
    ("cheap path ÷ echo ceiling, 64 connections", "≥ 0.85",
     has("cheap_rps", "echo_rps", "echo_same_rps") and
     f"**{n('cheap_rps') / n('echo_rps'):.2f}**: {g(n('cheap_rps'))} vs {g(n('echo_rps'))} req/s (echo at actix's default workers); "
     f"{n('cheap_rps') / n('echo_same_rps'):.2f} against the echo at the guard's worker count ({g(n('echo_same_rps'))} req/s); "
     + (f"medians of {f['rounds']} rounds" if f['rounds'] != "1" else "1 round")
     + f", {f['cheap_bad']} non-2xx", "`ONLY=1 tools/perf.sh`"),
    ("latency added over a 20 ms mock guard model, 256 connections", "≤ 1 ms p50, ≤ 3 ms p99",
     has("model256_add_p50") and
     f"p50 **+{f['model256_add_p50']} ms**, p99 **+{f['model256_add_p99']} ms** over the mock measured alone, "
     f"at {g(n('model256_rps'))} req/s, {f['model256_bad']} non-2xx", "`ONLY=3 tools/perf.sh`"),
    ("latency added over a 20 ms mock guard model, 64 connections", "",
     has("model64_add_p50") and
     f"p50 +{f['model64_add_p50']} ms, p99 +{f['model64_add_p99']} ms over the mock measured alone, "
     f"at {g(n('model64_rps'))} req/s, {f['model64_bad']} non-2xx", "`ONLY=3 tools/perf.sh`"),
    ("RSS idle after start", "≤ 30 MB", has("idle_mb") and f"**{f['idle_mb']} MB**", "`ONLY=1 tools/perf.sh`"),
    ("RSS peak under the 64- and 256-connection model-path load", "≤ 100 MB",
     has("peak_mb") and f"**{f['peak_mb']} MB**", "`ONLY=3 tools/perf.sh`"),
    ("RSS with 100,000 cached verdicts", "≤ 100 MB",
     has("cached_mb") and f"**{f['cached_mb']} MB** ({g(n('cached_entries'))} verdicts cached)", "`ONLY=4 tools/perf.sh`"),
    ("start-up to ready, both products", "≤ 150 ms",
     has("startup_ms") and f"**{f['startup_ms']} ms** (median of 15 starts)", "`ONLY=5 tools/perf.sh`"),
    ("`guard screen --jsonl` over the development split, whole process, vs pycld2", "faster",
     has("jsonl_ratio") and
     f"**{f['jsonl_guard_s']} s vs {f['jsonl_pycld2_s']} s** (ratio {f['jsonl_ratio']}, {g(n('jsonl_rows'))} rows)",
     "`ONLY=6 tools/perf.sh` (needs `../shared/data` and `pip install pycld2`)"),
]
for name, label in [("litellm", "LiteLLM, its full body"), ("litellm_min", "LiteLLM, only the fields guard reads"),
                    ("nemo", "NeMo checks"), ("webhook", "Guardrail Webhook"),
                    ("native_full", "none (control: /v1/screen with LiteLLM's full body beside its fields, read past)")]:
    # Every row is listed whether this run measured it or not, so that a row it did not
    # measure is kept as it was (not dropped).
    goal = "" if name == "native_full" else "≤ 5 % req/s, ≤ 0.2 ms p50"
    measured = False
    if has(f"gw_{name}_rps", "gw_native_rps"):
        d = n(f"gw_{name}_rps") / n("gw_native_rps") - 1
        p = n(f"gw_{name}_p50") - n("gw_native_p50")
        measured = (f"**{d * 100:+.1f} %** req/s ({g(n(f'gw_{name}_rps'))} vs {g(n('gw_native_rps'))}), p50 **{p:+.3f} ms**; "
                    f"medians of {f['gw_rounds']} rounds, the same questions, one guard, {f[f'gw_{name}_bad']} non-2xx")
    rows.append((f"gateway adapter overhead, {label}, against /v1/screen, 64 connections", goal, measured,
                 "`ONLY=7 tools/perf.sh`"))
text = open(doc, encoding="utf-8").read()
head, rest = text.split("<!-- perf:begin -->\n", 1)
block, tail = rest.split("<!-- perf:end -->", 1)
kept = {}
for line in block.splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if line.startswith("|") and len(cells) == 5:
        kept[cells[0]] = line
out = ["| measure | goal | measured | command | run |", "|---|---|---|---|---|"]
for key, goal, measured, command in rows:
    if measured:
        out.append(f"| {key} | {goal} | {measured} | {command} | {run} |")
    elif key in kept:
        out.append(kept[key])
open(doc, "w", encoding="utf-8").write(head + "<!-- perf:begin -->\n" + "\n".join(out) + "\n" + "<!-- perf:end -->" + tail)
print(f"results table written to {doc}")
PY
fi
