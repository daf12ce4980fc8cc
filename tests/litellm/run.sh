#!/usr/bin/env bash
# A real LiteLLM proxy (from PyPI, pinned) in front of a mock model, with the real guard as its
# Generic Guardrail API guardrail, checked through LiteLLM's own /v1/chat/completions.
#
#   bash tests/litellm/run.sh                   # the main phase (what CI runs)
#   PHASES="main during down downopen examples" bash tests/litellm/run.sh
#   VENV=/path/venv bash tests/litellm/run.sh   # reuse (or create) that virtual environment
#
# Environment: GUARD_BIN (default target/debug/guard; build it first), VENV (default: a
# throwaway one under WORK), WORK (default: a temporary folder), LITELLM_SPEC (the pinned
# package), RIG_NETNS=0 (no network namespace). The install needs the package registry;
# everything after it runs in a network namespace with only loopback (unshare -n) when one can
# be made, so nothing reaches the network. The last line is "N passed, N failed"; exit 1 on a
# failure, 77 when the pinned package cannot be installed (INSTALL_TIMEOUT bounds each install
# step, 300 s by default). Times of each step are printed.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# 1.108.7 is the newest release whose [proxy] extra installs from the registry CI uses; never
# float it (a compromised release of this package has been published before).
LITELLM_SPEC=${LITELLM_SPEC:-"litellm[proxy]==1.108.7"}
PHASES=${PHASES:-main}
# The phase "examples" runs docs/integrations.md's Python examples (examples.py) with these, in
# a virtual environment of their own (their openai pins differ from LiteLLM's).
EXAMPLES_SPEC=${EXAMPLES_SPEC:-"openai-agents==0.24.0 langchain==1.5.2 langchain-openai==1.7.4 aiohttp httpx"}
WORK=${WORK:-$(mktemp -d -t guard-litellm.XXXXXX)}
VENV=${VENV:-$WORK/venv}
EXAMPLES_VENV=${EXAMPLES_VENV:-$WORK/examples-venv}
GUARD_BIN=${GUARD_BIN:-$ROOT/target/debug/guard}
PY=${PYTHON:-python3}
mkdir -p "$WORK"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# ---- 1. install, outside the namespace (it needs the registry) ---------------------------
if [ -z "${RIG_IN_NETNS:-}" ]; then
  [ -x "$GUARD_BIN" ] || { echo "no guard binary at $GUARD_BIN (cargo build --bin guard)" >&2; exit 1; }
  if [ ! -x "$VENV/bin/litellm" ]; then
    t0=$(now)
    # uv installs the same wheels in parallel without compiling .pyc files first: about 15 s
    # here, against about 2.5 min with pip.
    UV=$(command -v uv || true)
    if [ -z "$UV" ]; then
      UVTOOL=${UVTOOL:-$WORK/uvtool}
      [ -x "$UVTOOL/bin/uv" ] || { "$PY" -m venv "$UVTOOL" && timeout "${INSTALL_TIMEOUT:-300}" "$UVTOOL/bin/pip" install --quiet --disable-pip-version-check --timeout 30 "uv>=0.9,<1"; } || true
      UV=$UVTOOL/bin/uv
    fi
    # Exit 77 when the package cannot be installed (no registry, the pin withdrawn): the caller
    # says whether that skips the checks or fails them. Bounded, so a registry that does not
    # answer cannot hold CI.
    if ! { [ -x "$UV" ] && timeout "${INSTALL_TIMEOUT:-300}" "$UV" venv --quiet --python "$PY" "$VENV" \
      && VIRTUAL_ENV="$VENV" timeout "${INSTALL_TIMEOUT:-300}" "$UV" pip install --quiet "$LITELLM_SPEC"; }; then
      rm -rf "$VENV"
      echo "cannot install $LITELLM_SPEC (uv: ${UV:-none}) after $(secs "$t0" "$(now)") s" >&2
      exit 77
    fi
    echo "time: install $(secs "$t0" "$(now)") s ($LITELLM_SPEC into $VENV)"
  else
    echo "time: install 0 s (reused $VENV)"
  fi
  if [[ " $PHASES " == *" examples "* ]] && [ ! -x "$EXAMPLES_VENV/bin/python" ]; then
    UV=$(command -v uv || echo "${UVTOOL:-$WORK/uvtool}/bin/uv")
    [ -x "$UV" ] || { "$PY" -m venv "$WORK/uvtool" && "$WORK/uvtool/bin/pip" install --quiet --disable-pip-version-check "uv>=0.9,<1"; UV=$WORK/uvtool/bin/uv; }
    "$UV" venv --quiet --python "$PY" "$EXAMPLES_VENV"
    # shellcheck disable=SC2086 # a list of requirements
    VIRTUAL_ENV="$EXAMPLES_VENV" "$UV" pip install --quiet $EXAMPLES_SPEC
  fi
  if [ "${RIG_NETNS:-1}" = 1 ] && command -v unshare >/dev/null && command -v ip >/dev/null && unshare -n true 2>/dev/null; then
    echo "network: a namespace with loopback only"
    RIG_IN_NETNS=1 WORK="$WORK" VENV="$VENV" GUARD_BIN="$GUARD_BIN" EXAMPLES_VENV="$EXAMPLES_VENV" \
      exec unshare -n bash "${BASH_SOURCE[0]}" "$@"
  fi
  echo "network: no namespace (RIG_NETNS=0, or unshare unavailable); everything binds 127.0.0.1"
else
  ip link set lo up
fi

# ---- 2. guard and the mock model ----------------------------------------------------------
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

free_port() { "$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_for_url() { # url pid what seconds
  local i
  for i in $(seq 1 $(($4 * 10))); do
    curl -sf "$1" >/dev/null 2>&1 && return 0
    kill -0 "$2" 2>/dev/null || { echo "$3 exited before it was ready" >&2; return 1; }
    sleep 0.1
  done
  echo "$3 not ready after $4 s" >&2; return 1
}

rm -f "$WORK"/*.port "$WORK"/*.jsonl
"$VENV/bin/python" "$HERE/mock_llm.py" --port-file "$WORK/mock.port" --log "$WORK/mock.jsonl" &
PIDS+=($!)
for i in $(seq 1 600); do [ -s "$WORK/mock.port" ] && break; sleep 0.1; done
[ -s "$WORK/mock.port" ] || { echo "the mock model did not start" >&2; exit 1; }

GUARD_KEY="ci-litellm-$("$VENV/bin/python" -c 'import secrets; print(secrets.token_hex(12))')"
GUARD_PORT=$(free_port)
t0=$(now)
# guard as deployed: keys scoped to the product (LiteLLM sends its api_key as x-api-key).
GUARD_API_KEYS="$GUARD_KEY wallet-assistant" GUARD_AUDIT_LOG="$WORK/audit.jsonl" \
  "$GUARD_BIN" --config-dir "$ROOT" serve --listen "127.0.0.1:$GUARD_PORT" --workers 2 > "$WORK/guard.log" 2>&1 &
PIDS+=($!)
wait_for_url "http://127.0.0.1:$GUARD_PORT/healthz" "${PIDS[-1]}" guard 120 || { tail -20 "$WORK/guard.log"; exit 1; }
echo "time: guard ready $(secs "$t0" "$(now)") s"

export MOCK_API_BASE="http://127.0.0.1:$(cat "$WORK/mock.port")/v1"
export GUARD_API_KEY=$GUARD_KEY
export GUARD_URL="http://127.0.0.1:$GUARD_PORT"
export LITELLM_MASTER_KEY="sk-ci-$("$VENV/bin/python" -c 'import secrets; print(secrets.token_hex(24))')"
export LITELLM_LOCAL_MODEL_COST_MAP=True      # no price-list fetch at start-up
export MOCK_LOG="$WORK/mock.jsonl"

# ---- 3. one LiteLLM per phase -----------------------------------------------------------
PASSED=0; FAILED=0
run_phase() { # phase config guard_base
  local phase=$1 config=$2 port pid t0 t1 out
  port=$(free_port)
  export GUARD_API_BASE=$3 LITELLM_URL="http://127.0.0.1:$port"
  t0=$(now)
  "$VENV/bin/litellm" --config "$HERE/$config" --host 127.0.0.1 --port "$port" > "$WORK/litellm-$phase.log" 2>&1 &
  pid=$!; PIDS+=("$pid")
  if ! wait_for_url "$LITELLM_URL/health/liveliness" "$pid" LiteLLM 300; then
    echo "FAIL $phase: LiteLLM did not start"; tail -20 "$WORK/litellm-$phase.log"
    FAILED=$((FAILED + 1)); kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; return
  fi
  t1=$(now)
  echo "== phase $phase ($config): LiteLLM ready after $(secs "$t0" "$t1") s"
  out=$("$VENV/bin/python" "$HERE/check.py" "$phase" || true)
  echo "$out" | sed '$d'
  echo "time: $phase checks $(secs "$t1" "$(now)") s"
  PASSED=$((PASSED + $(echo "$out" | tail -1 | awk '{print $1}')))
  FAILED=$((FAILED + $(echo "$out" | tail -1 | awk '{print $3}')))
  kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
}

DEAD="http://127.0.0.1:$(free_port)"   # nothing listens there
for phase in $PHASES; do
  case $phase in
    main) run_phase main config.yaml "$GUARD_URL" ;;
    during) run_phase during config.during.yaml "$GUARD_URL" ;;
    down) run_phase down config.yaml "$DEAD" ;;
    downopen) run_phase downopen config.failopen.yaml "$DEAD" ;;
    examples)
      echo "== phase examples (docs/integrations.md's Python examples, against guard and the mock)"
      out=$(GUARD_URL="$GUARD_URL" MOCK_URL="$MOCK_API_BASE" GUARD_KEY="$GUARD_KEY" "$EXAMPLES_VENV/bin/python" "$HERE/examples.py" "$ROOT/docs/integrations.md" 2>&1 || true)
      echo "$out" | sed '$d'
      PASSED=$((PASSED + $(echo "$out" | tail -1 | awk '{print $1+0}')))
      FAILED=$((FAILED + $(echo "$out" | tail -1 | awk '{print ($3 == "" ? 1 : $3+0)}')))
      ;;
    *) echo "unknown phase $phase"; FAILED=$((FAILED + 1)) ;;
  esac
done

echo "logs: $WORK"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
