#!/usr/bin/env python3
"""What the tiered guard (guard.embedded_first_below) saves and what it costs, on the held-out
fifth of ../shared/data that guard-train never trained on (the rule of tools/seed_evals.py).

Every held-out row is screened by the shipped wallet-assistant configuration (embedded guard);
a row "reaches the guard" when its screen got as far as the guard stage (rows the language
screen, the signatures or the policy rules stop never reach a guard model in either set-up).
For each threshold T: the share of benign rows reaching the guard that the embedded model
scores below T (remote calls saved), and the harmful rows reaching the guard scored below T
(the ones the remote model would no longer see).

    python3 tools/tiered_guard.py [--data ../shared/data] [--binary target/release/guard]
Data licences: ../shared/data/licenses (each file's licence note stays with it)."""
import argparse, json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from seed_evals import held_out  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENIGN = ["benign_banking77", "benign_notinject", "benign_wildguard", "benign_jbb", "benign_xstest"]
HARMFUL = ["harmful_advbench", "harmful_harmbench", "harmful_strongreject", "harmful_multijail",
           "jailbreak_inthewild", "sensitive_xsafety"]
THRESHOLDS = [0.02, 0.05, 0.1, 0.2]


def rows(data, stem, keep):
    out = []
    for line in open(os.path.join(data, stem + ".jsonl"), encoding="utf-8"):
        r = json.loads(line)
        if held_out(r) and keep(r):
            out.append(r["text"])
    return out


def guard_scores(binary, texts):
    inp = "".join(json.dumps({"id": i, "text": t}, ensure_ascii=False) + "\n" for i, t in enumerate(texts))
    out = subprocess.run([binary, "screen", "--product", "wallet-assistant", "--jsonl"],
                         input=inp.encode(), capture_output=True, cwd=ROOT, check=True).stdout
    scores = []
    for line in out.decode().splitlines():
        v = json.loads(line)
        g = [e for e in v.get("trace", []) if e["stage"] == "guard" and "p_unsafe=" in (e.get("detail") or "")]
        scores.append(float(g[0]["detail"].split("p_unsafe=")[1].split()[0]) if g else None)
    return scores


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "guard"))
    a = ap.parse_args()
    benign_keep = lambda r: r.get("label", "benign") == "benign"
    groups = {"benign_banking77": rows(a.data, "benign_banking77", benign_keep)}
    groups["all benign"] = [t for s in BENIGN for t in rows(a.data, s, benign_keep)]
    groups["all harmful"] = [t for s in HARMFUL for t in rows(a.data, s, lambda r: True)]
    groups["xstest harmful"] = rows(a.data, "benign_xstest", lambda r: r.get("label") == "harmful")
    print(f"{'held-out rows':18}{'rows':>7}{'reach guard':>13}" + "".join(f"{'< ' + str(t):>12}" for t in THRESHOLDS))
    for name, texts in groups.items():
        s = [x for x in guard_scores(a.binary, texts) if x is not None]
        cells = "".join(f"{sum(x < t for x in s):>5} {100.0 * sum(x < t for x in s) / max(len(s), 1):5.1f}%" for t in THRESHOLDS)
        print(f"{name:18}{len(texts):>7}{len(s):>13}{cells}")
    print("benign rows: remote calls saved; harmful rows: waved past without the remote model")


if __name__ == "__main__":
    main()
