#!/usr/bin/env python3
"""Per padded suite, the share of variants handled right among those whose plain case
(the data-* case they pad) is handled right: what padding itself costs, apart from what the
plain case already gets wrong. Reads the JSON report of `guard eval --json`; with two reports
(before, after) prints both side by side.

    guard eval tests/evals/ --json after.json
    python3 tools/padded_recall.py [before.json] after.json
"""
import glob, json, os, sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def conditional(report):
    fails = {(f["suite"], f["name"]) for f in json.load(open(report))["failures"]}
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "evals", "padded-*.yaml"))):
        suite = os.path.basename(path)[:-5]
        plain = "data-" + suite[len("padded-"):].removesuffix("-heldout")
        right = total = 0
        for case in yaml.safe_load(open(path, encoding="utf-8"))["cases"]:
            if (plain, case["name"].rsplit("/", 1)[0]) in fails:
                continue
            total += 1
            right += (suite, case["name"]) not in fails
        out[suite] = (right, total)
    return out


def main():
    reports = [conditional(r) for r in sys.argv[1:]]
    if not reports:
        sys.exit(__doc__)
    for suite in reports[-1]:
        cells = [f"{r[suite][0]:4}/{r[suite][1]:<4} {100 * r[suite][0] / max(1, r[suite][1]):6.1f}%" for r in reports]
        print(f"{suite:38} " + "  ->  ".join(cells))


if __name__ == "__main__":
    main()
