#!/usr/bin/env python3
"""The answer set's figures for issue 28's goals: planted figures caught and grounded answers
flagged, per language and per planting method, tuning part and held-out part apart.

    cargo build --release && python3 tools/turn_figures.py [--binary target/release/guard]

It runs `guard eval --json` on tests/evals/turn-answers-*.yaml and reads the `lookup_*` checks:
a planted answer is caught when its `lookup_ungrounded` check passed (needs_lookup with exactly
the planted figure), a grounded one flagged when its `lookup_grounded` check failed. On a build
without the lookup check those checks are not run, and the script says so.
"""
import argparse
import collections
import glob
import json
import os
import subprocess
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "guard"))
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(ROOT, "tests", "evals", "turn-answers-*.yaml")))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        subprocess.run([args.binary, "eval", *files, "--json", out, "--baseline", os.path.join(tmp, "b.json")],
                       cwd=ROOT, capture_output=True, check=False)
        report = json.load(open(out))
    failed = {(f["suite"], f["name"], f.get("check")) for f in report["failures"]}
    not_run = sum(g.get("not_run", 0) for n, g in report["groups"].items() if ".lookup" in n)
    if not_run:
        print(f"the lookup check is not on this build: {not_run} lookup checks not run")
        return
    tally = collections.defaultdict(lambda: [0, 0])
    for path in files:
        suite = os.path.basename(path)[:-5]
        part = "held out" if suite.endswith("-heldout") else "tuning"
        for c in yaml.safe_load(open(path, encoding="utf-8"))["cases"]:
            lang = "bn" if "-bn-" in c["name"] else "en"
            if c.get("planted"):
                ok = (suite, c["name"], "lookup_ungrounded") not in failed
                for key in [("planted caught", part, lang), ("planted caught", part, c["planted"])]:
                    tally[key][0] += ok
                    tally[key][1] += 1
            else:
                flagged = (suite, c["name"], "lookup_grounded") in failed
                key = ("grounded flagged", part, lang)
                tally[key][0] += flagged
                tally[key][1] += 1
    for (what, part, by), (n, total) in sorted(tally.items()):
        print(f"{what:18} {part:9} {by:14} {n:4}/{total:<4} {100 * n / max(total, 1):6.1f} %")


if __name__ == "__main__":
    main()
