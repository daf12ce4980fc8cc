#!/usr/bin/env python3
"""Start-up to ready of `guard serve` (both shipped products), whole process: the time from
spawning the binary to the first `200` from /readyz, polled every millisecond. Median of N runs.
Usage: python3 tools/startup_time.py [--runs 15] [--binary target/release/guard]"""
import argparse, os, socket, statistics, subprocess, time, urllib.request

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def once(binary):
    port = free_port()
    env = dict(os.environ, GUARD_AUDIT_LOG="off")
    t0 = time.perf_counter()
    p = subprocess.Popen([binary, "serve", "--listen", f"127.0.0.1:{port}"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as r:
                    if r.status == 200:
                        return time.perf_counter() - t0
            except OSError:
                time.sleep(0.001)
            if time.perf_counter() - t0 > 30:
                raise SystemExit("not ready after 30 s")
    finally:
        p.terminate(); p.wait()

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--binary", default="target/release/guard")
    a = ap.parse_args()
    times = [once(a.binary) for _ in range(a.runs)]
    print(f"start-up to ready: median {statistics.median(times)*1000:.0f} ms "
          f"(min {min(times)*1000:.0f}, max {max(times)*1000:.0f}, {a.runs} runs)")

if __name__ == "__main__":
    main()
