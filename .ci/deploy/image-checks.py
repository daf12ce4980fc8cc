"""Run guard's image and check what docs/deploy.md says of it (called by .ci/deploy-checks).

Usage: python3 image-checks.py IMAGE SINGLE.yaml HOST_GUARD_BINARY KUBE_PLAY_PYTHON

Every container it starts is named guard-check-<pid>-*, and only those are removed. Readiness
is waited for as an event (polling /readyz until it answers 200, 30 s before giving up); the
start-up figures are printed, never asserted: a busy machine must not fail the checks.
"""

import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

IMAGE, SINGLE, HOST_GUARD, KUBE_PY = sys.argv[1:5]
PREFIX = f"guard-check-{os.getpid()}"
API_KEY = "deploy-check-key"
CANARY = "deploy check canary 5d1e: what is my balance?"
STARTS = 5
created: list[str] = []
pods: list[str] = []
volumes: list[str] = []


class Fail(Exception):
    pass


# No podman or helper call here takes minutes; one that hangs (a stuck storage lock) fails the
# check with its command named instead of running CI into its time limit.
RUN_TIMEOUT_S = 300


def run(*args: str, check: bool = True, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("timeout", RUN_TIMEOUT_S)
    try:
        p = subprocess.run(args, capture_output=True, text=True, **kw)
    except subprocess.TimeoutExpired as e:
        raise Fail(f"{' '.join(args)}: no answer in {e.timeout} s") from None
    if check and p.returncode != 0:
        raise Fail(f"{' '.join(args)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    return p


def podman(*args: str, check: bool = True) -> str:
    return run("podman", *args, check=check).stdout.strip()


def ok(msg: str) -> None:
    print(f"ok   {msg}", flush=True)


def expect(cond: bool, msg: str) -> None:
    if not cond:
        raise Fail(msg)
    ok(msg)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def inspect(ctr: str) -> dict:
    return json.loads(podman("inspect", ctr))[0]


def ns_http(pid: int, url: str, body: str | None = None, key: str | None = API_KEY):
    """An HTTP request from inside the container's network namespace (it may have no other)."""
    args = ["nsenter", "-t", str(pid), "-n", "curl", "-s", "-m", "5", "-w", "\n%{http_code}"]
    if key:
        args += ["-H", f"authorization: Bearer {key}"]
    if body is not None:
        args += ["-H", "content-type: application/json", "--data-binary", body]
    p = run(*args, url, check=False)
    text, _, code = p.stdout.rpartition("\n")
    return int(code or 0), text


def port_http(url: str, body: str | None = None, key: str | None = API_KEY):
    req = urllib.request.Request(url, data=body.encode() if body is not None else None)
    if key:
        req.add_header("authorization", f"Bearer {key}")
    if body is not None:
        req.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return 0, str(e)


def wait_ready(get) -> float:
    """Poll /readyz until 200; the monotonic time it first answered."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        code, _ = get()
        if code == 200:
            return time.monotonic()
    raise Fail("/readyz never answered 200 within 30 s")


def start(name: str, *opts: str, env: dict | None = None, args: tuple = ()) -> tuple[str, int]:
    env = {"GUARD_API_KEYS": f"{API_KEY} *", **(env or {})}
    flags = [f"--env={k}={v}" for k, v in env.items()]
    ctr = podman("run", "-d", f"--name={PREFIX}-{name}", *flags, *opts, IMAGE, *args)
    created.append(ctr)
    return ctr, inspect(ctr)["State"]["Pid"]


def sigterm(ctr: str) -> int:
    podman("kill", "--signal", "TERM", ctr)
    return int(podman("wait", ctr))


def screen_body(text: str) -> str:
    return json.dumps({"product": "wallet-assistant", "text": text})


def check_files() -> None:
    size = int(podman("image", "inspect", "--format", "{{.Size}}", IMAGE))
    print(f"figure image size: {size / 1e6:.1f} MB ({size} bytes; goal <= 40 MB)")
    root = podman("image", "mount", IMAGE)
    try:
        files = []
        for d, _, names in os.walk(root):
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
    finally:
        podman("image", "unmount", IMAGE)
    allowed = ("usr/local/bin/guard", "etc/passwd", "etc/group")
    dirs = ("etc/guard/", "lib/x86_64-linux-gnu/", "lib64/", "usr/lib/x86_64-linux-gnu/")
    stray = [f for f in files if f not in allowed and not f.startswith(dirs)]
    expect(not stray, f"the image holds guard, its libraries and its configuration only {stray or ''}")
    libs = sorted(f for f in files if f.startswith(dirs[1:]))
    print(f"     libraries: {', '.join(libs)}")
    tools = {"sh", "bash", "dash", "ash", "busybox", "apt", "apt-get", "dpkg", "curl", "wget"}
    found = [f for f in files if os.path.basename(f) in tools]
    expect(not found, f"no shell and no package manager in the image {found or ''}")
    p = run("podman", "run", "--rm", "--network=none", "--entrypoint=/bin/sh", IMAGE, "-c", "true",
            check=False)
    expect(p.returncode != 0, f"/bin/sh cannot be run (exit {p.returncode})")


def check_refuses_without_keys() -> None:
    p = run("podman", "run", "--rm", "--network=none", IMAGE, check=False)
    expect(p.returncode == 2 and "refusing to listen" in p.stderr,
           "with no API keys the image refuses to serve 0.0.0.0 and exits 2")


def check_air_gapped_read_only() -> None:
    ctr, pid = start("ro", "--network=none", "--read-only", "--read-only-tmpfs=false",
                     "--cap-drop=ALL", "--security-opt=no-new-privileges")
    wait_ready(lambda: ns_http(pid, "http://127.0.0.1:9090/readyz", key=None))
    ok("/readyz 200, polled from inside the container's network namespace")
    state = inspect(ctr)
    expect(state["HostConfig"]["ReadonlyRootfs"], "root file system read-only, no tmpfs")
    expect(state["HostConfig"]["NetworkMode"] == "none", "started with --network=none")
    links = run("nsenter", "-t", str(pid), "-n", "ip", "-o", "link").stdout
    expect([l.split(":")[1].strip() for l in links.splitlines()] == ["lo"],
           "its only network interface is loopback")
    status = open(f"/proc/{pid}/status").read().splitlines()
    ids = {l.split(":")[0]: l.split()[1:] for l in status if l.startswith(("Uid", "Gid"))}
    expect(ids == {"Uid": ["65532"] * 4, "Gid": ["65532"] * 4},
           "the process runs as UID/GID 65532 (real, effective, saved, fs)")
    rss = [l.split()[1] for l in status if l.startswith("VmRSS")]
    print(f"figure resident memory once ready: {int(rss[0]) / 1024:.1f} MB")
    caps = [l.split()[1] for l in status if l.startswith("CapEff")]
    expect(caps == ["0000000000000000"], "no capabilities")
    code, body = ns_http(pid, "http://127.0.0.1:8080/v1/screen", screen_body(CANARY))
    expect(code == 200 and json.loads(body)["decision"] == "allow",
           "POST /v1/screen with the key: 200, allow")
    code, _ = ns_http(pid, "http://127.0.0.1:8080/v1/screen", screen_body(CANARY), key=None)
    expect(code == 401, "without the key: 401")
    code, metrics = ns_http(pid, "http://127.0.0.1:9090/metrics", key=None)
    expect(code == 200, "/metrics on the ops port")
    hpa = open("deploy/k8s/overlays/replicated/hpa.yaml").read()
    scaled_on = re.findall(r"^\s+name: (guard_\w+)$", hpa, re.M)
    served = {l.split()[0].split("{")[0] for l in metrics.splitlines() if l[:1] != "#"}
    expect(bool(scaled_on) and set(scaled_on) <= served,
           f"the HPA's metric {scaled_on} is one guard serves")
    rc = sigterm(ctr)
    expect(rc == 0, f"SIGTERM: exit {rc}")
    out = run("podman", "logs", ctr).stdout
    lines = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    expect(any(l.get("product") == "wallet-assistant" and "text_hmac" in l for l in lines),
           "the verdict's audit line is on stdout (written out before exit)")
    logs = out + run("podman", "logs", ctr).stderr
    expect(CANARY not in logs, "the screened text is in no log line")


def check_start_time() -> None:
    """Start to /readyz 200, five times. The poller runs before the container starts (on the
    host's loopback, so --network=host), so the figure is guard's start, not the poller's."""
    from_run, from_start = [], []
    for i in range(STARTS):
        api, ops = free_port(), free_port()
        url = f"http://127.0.0.1:{ops}/readyz"
        ready: list[float] = []
        stop = threading.Event()

        def poll() -> None:
            while not stop.is_set():
                code, _ = port_http(url, key=None)
                if code == 200:
                    ready.append(time.time())
                    return
                time.sleep(0.001)

        poller = threading.Thread(target=poll)
        poller.start()
        t0 = time.time()
        try:
            ctr, _ = start(f"start{i}", "--network=host", "--read-only", "--read-only-tmpfs=false",
                           "--cap-drop=ALL",
                           env={"GUARD_LISTEN": f"127.0.0.1:{api}",
                                "GUARD_OPS_LISTEN": f"127.0.0.1:{ops}"})
            poller.join(timeout=30)
        finally:
            stop.set()
            poller.join()
        if not ready:
            raise Fail("/readyz never answered 200 within 30 s")
        from_run.append(ready[0] - t0)
        # When the runtime started the container's process (podman's record), to the first 200.
        started = inspect(ctr)["State"]["StartedAt"]
        from_start.append(ready[0] - float(run("date", "-d", started, "+%s.%N").stdout.strip()))
        rc = sigterm(ctr)
        expect(rc == 0, f"start {i + 1} of {STARTS}: /readyz 200, then SIGTERM: exit {rc}")
    ms = lambda xs: f"median {statistics.median(xs) * 1000:.0f} ms (" + ", ".join(
        f"{x * 1000:.0f}" for x in xs) + ")"
    print(f"figure podman run -> /readyz 200: {ms(from_run)}")
    print(f"figure container start (State.StartedAt) -> /readyz 200: {ms(from_start)}; goal <= 1000 ms")


def check_mapped_ports() -> None:
    api, ops = free_port(), free_port()
    ctr, _ = start("ports", f"--publish=127.0.0.1:{api}:8080", f"--publish=127.0.0.1:{ops}:9090")
    wait_ready(lambda: port_http(f"http://127.0.0.1:{ops}/readyz", key=None))
    ok(f"/readyz through the mapped ops port 127.0.0.1:{ops}")
    code, body = port_http(f"http://127.0.0.1:{api}/v1/screen", screen_body("What is my balance?"))
    expect(code == 200, f"POST /v1/screen through the mapped port 127.0.0.1:{api} ({code} {body})")
    expect(sigterm(ctr) == 0, "SIGTERM: exit 0")
    # Writable root this time: whatever guard wrote is in the container's upper layer, beside the
    # mount points and files podman itself puts there.
    upper = inspect(ctr)["GraphDriver"]["Data"].get("UpperDir")
    if not upper:
        raise Fail("no overlay upper layer to look at (storage driver is not overlay)")
    runtime = {"dev", "etc", "etc/hostname", "etc/hosts", "etc/mtab", "etc/resolv.conf", "proc",
               "run", "run/.containerenv", "sys"}
    written = []
    for d, subdirs, names in os.walk(upper):
        written += [os.path.relpath(os.path.join(d, n), upper) for n in subdirs + names]
    written = sorted(set(written) - runtime)
    expect(not written, f"guard wrote nothing to the file system (serving, then SIGTERM) {written or ''}")


def check_shared_gate() -> None:
    """Two containers on one Redis hold one velocity limit (3 transfers per conversation)."""
    if not shutil.which("redis-server"):
        raise Fail("redis-server is not installed (.ci/run installs it)")
    port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                              "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        def replicas(tag: str, env: dict) -> list[tuple[str, int]]:
            out = []
            for r in ("a", "b"):
                api = free_port()
                ctr, _ = start(f"{tag}-{r}", "--network=host", "--read-only",
                               "--read-only-tmpfs=false",
                               env={"GUARD_LISTEN": f"127.0.0.1:{api}",
                                    "GUARD_OPS_LISTEN": "", **env})
                wait_ready(lambda: port_http(f"http://127.0.0.1:{api}/readyz", key=None))
                out.append((ctr, api))
            return out

        def transfers(pair, conversation: str) -> list[str]:
            got = []
            for turn in range(1, 5):
                _, api = pair[(turn - 1) % 2]  # a, b, a, b
                # The signed-in customer owns the wallet (the shipped products check entitlement).
                body = json.dumps({"product": "wallet-assistant", "conversation": conversation,
                                   "turn": turn,
                                   "caller": {"id": "c-1", "records": {"wallet": ["01711000000"]}},
                                   "calls": [{"id": "t", "tool": "send_money",
                                   "args": {"wallet": "01711000000", "to": "01811000000",
                                            "amount": 500}}]})
                code, text = port_http(f"http://127.0.0.1:{api}/v1/tool-calls", body)
                if code != 200:
                    raise Fail(f"/v1/tool-calls: {code} {text}")
                d = json.loads(text)["decisions"][0]
                got.append(d.get("rule") or d["reason"] if d["decision"] != "run" else "run")
            return got

        shared = replicas("redis", {"GUARD_GATE_STORE": "redis",
                                    "GUARD_REDIS_URL": f"redis://127.0.0.1:{port}/0"})
        got = transfers(shared, f"c-{PREFIX}-redis")
        expect(got == ["run", "run", "run", "transfers_per_conversation"],
               f"GUARD_GATE_STORE=redis: two replicas hold one limit of 3 transfers {got}")
        for ctr, _ in shared:
            expect(sigterm(ctr) == 0, "SIGTERM: exit 0")
        apart = replicas("memory", {})
        got = transfers(apart, f"c-{PREFIX}-memory")
        expect(got == ["run"] * 4,
               f"in-process state (the shipped policies): each replica counts alone {got}")
        for ctr, _ in apart:
            expect(sigterm(ctr) == 0, "SIGTERM: exit 0")
    finally:
        redis.terminate()
        redis.wait()


def check_kube_play() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        play = os.path.join(tmp, "single.yaml")
        text = run(KUBE_PY, os.path.join(os.path.dirname(__file__), "kube-play.py"), SINGLE,
                   IMAGE, API_KEY, f"{PREFIX}-kube").stdout
        with open(play, "w") as f:
            f.write(text)
        # kube play makes a named volume of each ConfigMap and reuses one left by an earlier run.
        # Such a leftover is removed first: podman 4.3 frees a volume's lock when its pod is
        # force-removed, hands the number to the next container, and a play that mounts the old
        # volume then waits on its own lock for ever (seen here three times in a row).
        volumes.extend(re.findall(r"(?m)^  name: (guard-[a-z-]+-[a-z0-9]{10})$", text))
        expect(len(volumes) == 3, f"the play mounts three ConfigMaps as volumes: {volumes}")
        for vol in volumes:
            podman("volume", "rm", "--force", vol, check=False)
        pods.append(f"{PREFIX}-kube-pod-0")
        podman("kube", "play", play)
        ctr = podman("ps", "-q", "--filter", f"pod={PREFIX}-kube-pod-0",
                     "--filter", "ancestor=" + IMAGE)
        state = inspect(ctr)
        pid = state["State"]["Pid"]
        ready = wait_ready(lambda: ns_http(pid, "http://127.0.0.1:9090/readyz", key=None))
        del ready
        _, body = ns_http(pid, "http://127.0.0.1:9090/readyz", key=None)
        served = json.loads(body)["products"]
        ok("podman kube play of the single overlay's Deployment: /readyz 200")
        mounts = {m["Destination"] for m in state["Mounts"]}
        want = {"/etc/guard/products", "/etc/guard/policies", "/etc/guard/judge_prompts"}
        expect(want <= mounts, "products/, policies/, judge_prompts/ are the mounted ConfigMaps")
        repo = run(HOST_GUARD, "--config-dir", ".", "check-config").stdout
        # `ok <product> config_rev=<rev> ...` lines; `warn` lines say what the product lacks.
        revs = dict(
            (w.split()[1], w.split()[2].removeprefix("config_rev="))
            for w in repo.splitlines()
            if w.startswith("ok ")
        )
        expect(served == revs,
               "the pod serves the repository's configuration (same config_rev per product)")
        status = open(f"/proc/{pid}/status").read()
        expect("Uid:\t65532\t65532\t65532\t65532" in status, "runs as 65532 in the pod")
        expect(state["HostConfig"]["ReadonlyRootfs"], "read-only root in the pod")
        podman("pod", "stop", "--time=15", f"{PREFIX}-kube-pod-0")
        code = inspect(ctr)["State"]["ExitCode"]
        expect(code == 0, f"pod stopped (SIGTERM): guard exit {code}")


def main() -> int:
    try:
        for check in (check_files, check_refuses_without_keys, check_air_gapped_read_only,
                      check_start_time, check_mapped_ports, check_shared_gate, check_kube_play):
            t = time.monotonic()
            print(f"-- {check.__name__}", flush=True)
            check()
            print(f"   ({time.monotonic() - t:.1f} s)", flush=True)
    except Fail as e:
        print(f"FAIL {e}", file=sys.stderr)
        return 1
    finally:
        for pod in pods:
            podman("pod", "rm", "--force", pod, check=False)
        for ctr in created:
            podman("rm", "--force", ctr, check=False)
        for vol in volumes:
            podman("volume", "rm", "--force", vol, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
