#!/usr/bin/env python3
"""Figures of the policy suites (tests/evals/policy-*.yaml) through the whole pipeline, shipped
configuration, no judge (`guard screen --jsonl`), per suite and family:

- abuse suites: share caught (blocked, or sent to the judge), and how: a block rule, a review
  rule, the guard model (unsafe or borderline), or another stage;
- work suites: share allowed with no judge, and with a judge that allows business (a question
  that only waited for the judge, `judge_unavailable`, counts as allowed).

    cargo build --release
    python3 tools/policy_figures.py [--binary target/release/guard] [--families] [--failures SUITE]
"""
import argparse, collections, glob, json, os, subprocess
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def outcome(v):
    """How a verdict ended: rule_block, review, guard, borderline, other_block or allowed."""
    if v["decision"] == "allow":
        return "allowed"
    if v["reason"] == "policy_blocked":
        return "rule_block"
    reviewed = any(t["stage"] == "policy" and "review" in (t.get("detail") or "") for t in v["trace"])
    if reviewed:
        return "review"
    if v["reason"] == "judge_unavailable":
        return "borderline"
    if v["reason"] == "unsafe":
        return "guard"
    return "other_block"


def screen(binary, product, texts):
    inp = "".join(json.dumps({"id": i, "text": t}, ensure_ascii=False) + "\n" for i, t in enumerate(texts))
    out = subprocess.run([binary, "screen", "--product", product, "--jsonl"], input=inp.encode(),
                         capture_output=True, cwd=ROOT, check=True).stdout.decode().splitlines()
    return [json.loads(line) for line in out]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "guard"))
    ap.add_argument("--suites", default=os.path.join(ROOT, "tests", "evals", "policy-*.yaml"))
    ap.add_argument("--families", action="store_true", help="one line per family too")
    ap.add_argument("--failures", default="", help="print the failed cases of suites whose name contains this")
    ap.add_argument("--show-heldout", action="store_true",
                    help="print failures of the held-out suites too (only once tuning is over)")
    args = ap.parse_args()
    cols = ["rule_block", "review", "guard", "borderline", "other_block", "allowed"]
    print(f"{'suite / family':52} {'n':>4} " + " ".join(f"{c[:10]:>10}" for c in cols) + "   figure")
    for path in sorted(glob.glob(args.suites)):
        suite = yaml.safe_load(open(path, encoding="utf-8"))
        cases = [c for c in suite["cases"] if "decision" in c["expect"]]
        if not cases:
            continue
        abuse = cases[0]["expect"]["decision"] == "block"
        verdicts = screen(args.binary, suite["product"], [c["text"] for c in cases])
        by = collections.defaultdict(collections.Counter)
        name = os.path.basename(path)[:-5]
        for c, v in zip(cases, verdicts):
            o = outcome(v)
            fam = c["name"].split("-")[0] if "-" in c["name"] else "-"
            by["(all)"][o] += 1
            by[fam][o] += 1
            failed = (o == "allowed") if abuse else (o != "allowed")
            listed = args.failures and args.failures in name and ("heldout" not in name or args.show_heldout)
            if listed and failed:
                print(f"    FAIL {c['name']}: {o} {v['categories']} {c['text']}")
        rows = [("(all)", by["(all)"])] + (sorted((k, v) for k, v in by.items() if k != "(all)") if args.families else [])
        for fam, c in rows:
            n = sum(c.values())
            cells = " ".join(f"{100.0 * c[k] / n:9.1f}%" for k in cols)
            if abuse:
                fig = f"caught {100.0 * (n - c['allowed']) / n:5.1f}%"
            else:
                fig = (f"allowed {100.0 * c['allowed'] / n:5.1f}%, with a judge "
                       f"{100.0 * (c['allowed'] + c['review'] + c['borderline']) / n:5.1f}%")
            label = name if fam == "(all)" else "    " + fam
            print(f"{label:52} {n:>4} {cells}   {fig}")


if __name__ == "__main__":
    main()
