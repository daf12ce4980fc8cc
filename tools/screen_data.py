#!/usr/bin/env python3
"""Screen every labelled data file of ../shared/data through the whole pipeline
(`guard screen --jsonl`) and print, per source, language and label, the share of each outcome:
blocked for language, blocked by signatures, unsafe, borderline (reaches the judge), passed.

    cargo build --release
    python3 tools/screen_data.py [--product wallet-assistant] [--data ../shared/data]
"""
import argparse, collections, json, os, subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = ["harmful_advbench", "harmful_harmbench", "harmful_strongreject", "jailbreak_inthewild",
         "harmful_multijail", "sensitive_xsafety", "benign_banking77", "benign_xstest",
         "benign_notinject", "benign_wildguard", "benign_jbb", "sensitive_donotanswer"]


def outcome(v):
    r = v.get("reason")
    if r == "unsupported_language":
        return "language"
    if r == "prompt_injection":
        return "signature"
    if r == "unsafe":
        return "unsafe"
    if v.get("stage") == "judge":
        return "judge"
    return "passed" if v.get("decision") == "allow" else "other_block"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--product", default="wallet-assistant")
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "guard"))
    args = ap.parse_args()
    cols = ["language", "signature", "unsafe", "judge", "passed"]
    print(f"{'source / lang / label':44} {'rows':>5} " + " ".join(f"{c:>9}" for c in cols) + "   flagged")
    for name in FILES:
        rows = [json.loads(l) for l in open(os.path.join(args.data, name + ".jsonl"), encoding="utf-8")]
        if name == "sensitive_xsafety":
            rows = [r for r in rows if r.get("category") == "Goal_Hijacking"]
        inp = "".join(json.dumps({"id": i, "text": r["text"]}, ensure_ascii=False) + "\n" for i, r in enumerate(rows))
        out = subprocess.run([args.binary, "screen", "--product", args.product, "--jsonl"], input=inp.encode(),
                             capture_output=True, cwd=ROOT, check=True).stdout.decode().splitlines()
        groups = collections.defaultdict(collections.Counter)
        for r, line in zip(rows, out):
            lang = r.get("lang") if r.get("lang") in ("en", "bn") else "other"
            groups[(r["source"], lang, r["label"])][outcome(json.loads(line))] += 1
        for (source, lang, label), c in sorted(groups.items()):
            n = sum(c.values())
            flagged = n - c["passed"] - c["language"]
            safety_n = n - c["language"]
            cells = " ".join(f"{100.0 * c[k] / n:8.1f}%" for k in cols)
            fl = f"{100.0 * flagged / safety_n:6.1f}% of {safety_n}" if safety_n else "-"
            print(f"{source + ' / ' + lang + ' / ' + label:44} {n:>5} {cells}   {fl}")


if __name__ == "__main__":
    main()
