#!/usr/bin/env python3
"""Soak and fault tests of `guard serve` on loopback, with a mock Llama Guard server that
injects faults. Bounded in time and count; only 127.0.0.1 is ever contacted.

    cargo build --release
    python3 tools/soak.py soak --minutes 10 --rate 40      # 10 % faulted calls, fixed rate
    python3 tools/soak.py soak --minutes 5 --no-cache      # the same with the cache off (RSS)
    python3 tools/soak.py blackhole                         # breaker: fail fast, then recover
    python3 tools/soak.py connections                       # 1,000 connections, 500 ms model (wrk)

soak: every question is unique (no cache hits). The mock answers `safe` after 20 ms, except for
10 % of questions (chosen by a hash of the text, so the client knows which): a 3 s stall (past
the 1.5 s timeout), a reset connection, HTTP 503 or a garbage body. Reported: requests sent and
answered (none lost), statuses (no 5xx), faulted questions blocked as guard_unavailable, latency
percentiles, and RSS at minute 1 and at the end.

blackhole: the mock stops answering; after the breaker opens (5 failures), screens must fail
closed in milliseconds (p99 reported); the mock comes back and the breaker must close within one
cool-down (10 s).
"""
import argparse, hashlib, http.client, http.server, json, os, socket, socketserver, subprocess
import sys, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FAULTS = ["stall", "reset", "503", "garbage"]
STATE = {"blackhole": False, "delay": 0.02, "now": 0, "peak": 0}
LOCK = threading.Lock()


def fault_of(text):
    h = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    return FAULTS[h % 4] if h % 10 == 0 else None


class Mock(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            text = json.loads(body)["messages"][0]["content"]
        except Exception:
            text = ""
        if STATE["blackhole"]:
            time.sleep(30)
            return
        with LOCK:
            STATE["now"] += 1
            STATE["peak"] = max(STATE["peak"], STATE["now"])
        try:
            fault = None if STATE["delay"] > 0.1 else fault_of(text)
            time.sleep(STATE["delay"])
        finally:
            with LOCK:
                STATE["now"] -= 1
        if fault == "stall":
            time.sleep(3)
        elif fault == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.connection.close()
            return
        if fault == "503":
            out, status = b'{"error": "overloaded"}', 503
        elif fault == "garbage":
            out, status = b"<html>not json", 200
        else:
            out = json.dumps({"choices": [{"message": {"content": "safe"}}]}).encode()
            status = 200
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
        except OSError:
            pass  # the guard gave up waiting (the stall fault): expected


class ThreadingServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def config_without_cache():
    """A copy of the configuration with the verdict cache off, so that RSS shows leaks rather
    than the cache filling up with unique questions."""
    import shutil, tempfile
    d = tempfile.mkdtemp(prefix="guard-soak-")
    for sub in ["wordlists", "judge_prompts", "models", "policies", "products"]:
        shutil.copytree(os.path.join(ROOT, sub), os.path.join(d, sub))
    for name in os.listdir(os.path.join(d, "products")):
        p = os.path.join(d, "products", name)
        text = open(p, encoding="utf-8").read().replace("enabled = true", "enabled = false")
        open(p, "w", encoding="utf-8").write(text)
    return d


def start(mock_port, port, no_cache=False):
    env = dict(os.environ, GUARD_MODEL_URL=f"http://127.0.0.1:{mock_port}/v1", GUARD_MODEL_KIND="llama_guard_3",
               GUARD_MODEL_NAME="lg", GUARD_AUDIT_LOG="off")
    if no_cache:
        env["GUARD_CONFIG_DIR"] = config_without_cache()
    proc = subprocess.Popen([os.path.join(ROOT, "target", "release", "guard"), "serve", "--listen", f"127.0.0.1:{port}"],
                            cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            c.request("GET", "/healthz")
            c.getresponse().read()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    sys.exit("guard did not start")


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def screen(port, text):
    started = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request("POST", "/v1/screen", json.dumps({"product": "wallet-assistant", "text": text}),
                  {"Content-Type": "application/json"})
        r = c.getresponse()
        body = r.read()
        return r.status, json.loads(body), time.perf_counter() - started
    except Exception as e:
        return 0, {"error": str(e)}, time.perf_counter() - started
    finally:
        c.close()


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else 0


def soak(args, port, proc):
    results, lock = [], threading.Lock()
    rss1 = None
    total = int(args.minutes * 60 * args.rate)
    started = time.time()
    threads = []

    def one(i):
        text = f"What is my wallet balance today, question number {i}?"
        status, v, secs = screen(port, text)
        with lock:
            results.append((fault_of(text), status, v, secs))

    for i in range(total):
        due = started + i / args.rate
        delay = due - time.time()
        if delay > 0:
            time.sleep(delay)
        if rss1 is None and time.time() - started >= 60:
            rss1 = rss_kib(proc.pid)
        t = threading.Thread(target=one, args=(i,), daemon=True)
        t.start()
        threads.append(t)
        threads = [x for x in threads if x.is_alive()]
    for t in threads:
        t.join(timeout=15)
    rss_end = rss_kib(proc.pid)
    statuses = {}
    for _, s, _, _ in results:
        statuses[s] = statuses.get(s, 0) + 1
    faulted = [r for r in results if r[0]]
    blocked = [r for r in faulted if r[2].get("reason") == "guard_unavailable" and r[2].get("decision") == "block"]
    clean_allowed = sum(1 for r in results if not r[0] and r[2].get("decision") == "allow")
    lat = [r[3] * 1000 for r in results if r[1] == 200]
    print(json.dumps({
        "minutes": args.minutes, "rate_per_s": args.rate, "sent": total, "answered": len(results),
        "lost": total - len(results), "statuses": statuses,
        "5xx": sum(n for s, n in statuses.items() if s >= 500 or s == 0),
        "faulted": len(faulted), "faulted_blocked_guard_unavailable": len(blocked),
        "clean_allowed": clean_allowed, "clean": total - len(faulted),
        "latency_ms": {"p50": round(pct(lat, 0.5), 1), "p99": round(pct(lat, 0.99), 1), "max": round(max(lat or [0]), 1)},
        "rss_kib": {"minute_1": rss1, "end": rss_end,
                    "growth_pct": round(100 * (rss_end - rss1) / rss1, 1) if rss1 else None},
    }, indent=1))


def blackhole(port):
    for i in range(20):
        screen(port, f"warm up question {i}")
    STATE["blackhole"] = True
    opening = [screen(port, f"while black-holed {i}") for i in range(8)]
    fast = [screen(port, f"breaker open {i}") for i in range(200)]
    lat = [r[2] * 1000 for r in fast]
    reasons = {}
    for _, v, _ in fast:
        d = (v.get("trace") or [{}])[-1].get("detail")
        reasons[d] = reasons.get(d, 0) + 1
    STATE["blackhole"] = False
    back = time.time()
    recovered = None
    while time.time() - back < 30:
        s, v, _ = screen(port, f"after recovery {time.time()}")
        if v.get("decision") == "allow":
            recovered = time.time() - back
            break
        time.sleep(0.25)
    print(json.dumps({
        "first_calls_ms": [round(r[2] * 1000) for r in opening],
        "open_breaker_latency_ms": {"p50": round(pct(lat, 0.5), 2), "p99": round(pct(lat, 0.99), 2)},
        "open_breaker_details": reasons,
        "recovered_after_s": round(recovered, 1) if recovered is not None else None,
    }, indent=1))


def guard_model_sockets(pid, mock_port):
    """The guard's own established connections to the model (its side, from `ss`): a call it
    abandons is closed at once here, though the mock only notices when it answers."""
    out = subprocess.run(["ss", "-tnpH", "state", "established", "dport", f"= :{mock_port}"],
                         capture_output=True, text=True).stdout
    return sum(1 for l in out.splitlines() if f"pid={pid}," in l)


def connections(port, proc, seconds, mock_port=None):
    """1,000 client connections against a model that takes 500 ms: the model must never see more
    calls at once than the backend's cap (64), and the rest must be shed, not queued."""
    STATE["delay"] = 0.5
    lua = os.path.join(ROOT, "target", "soak-unique.lua")
    with open(lua, "w") as f:
        f.write("""local n = 0
request = function()
  n = n + 1
  local body = string.format('{"product": "wallet-assistant", "text": "what is my balance %d %d"}', math.random(1, 1000000000), n)
  return wrk.format("POST", "/v1/screen", {["Content-Type"] = "application/json"}, body)
end
""")
    rss = []
    sockets = []
    done = threading.Event()

    def sample():
        while not done.is_set():
            rss.append(rss_kib(proc.pid))
            time.sleep(0.5)

    def sample_sockets():
        while not done.is_set() and mock_port:
            sockets.append(guard_model_sockets(proc.pid, mock_port))
            time.sleep(0.05)

    threading.Thread(target=sample, daemon=True).start()
    threading.Thread(target=sample_sockets, daemon=True).start()
    out = subprocess.run(["wrk", "-t2", "-c1000", f"-d{seconds}s", "--timeout", "10s", "--latency", "-s", lua,
                          f"http://127.0.0.1:{port}/v1/screen"], capture_output=True, text=True).stdout
    done.set()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request("GET", "/metrics")
    metrics = c.getresponse().read().decode()
    calls = {l.split("outcome=")[1].split('"')[1]: float(l.split()[-1]) for l in metrics.splitlines()
             if l.startswith("guard_model_calls_total{backend=\"llama_guard_3\"")}
    print(json.dumps({
        "client_connections": 1000, "model_delay_ms": 500, "backend_cap": 64,
        "peak_concurrent_model_calls": STATE["peak"], "model_call_outcomes": calls,
        "peak_guard_model_sockets": max(sockets or [0]), "socket_samples": len(sockets),
        "rss_kib_peak": max(rss or [0]), "rss_kib_start": rss[0] if rss else None,
        "wrk": [l.strip() for l in out.splitlines() if "Requests/sec" in l or "50%" in l or "99%" in l or "Socket" in l or "Non-2xx" in l],
    }, indent=1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["soak", "blackhole", "connections"])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--rate", type=float, default=40)
    ap.add_argument("--no-cache", action="store_true", help="verdict cache off: RSS shows leaks, not the cache")
    args = ap.parse_args()
    mock_port, port = free_port(), free_port()
    mock = ThreadingServer(("127.0.0.1", mock_port), Mock)
    threading.Thread(target=mock.serve_forever, daemon=True).start()
    proc = start(mock_port, port, args.no_cache)
    try:
        if args.mode == "soak":
            soak(args, port, proc)
        elif args.mode == "connections":
            connections(port, proc, 20, mock_port)
        else:
            blackhole(port)
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        mock.shutdown()


if __name__ == "__main__":
    main()
