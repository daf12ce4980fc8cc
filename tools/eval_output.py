#!/usr/bin/env python3
"""Score the output screen on the CREDIT_CARD, PHONE_NUMBER, EMAIL_ADDRESS and IBAN_CODE spans of
../shared/data/pii_presidio_synth.jsonl (Microsoft Presidio's synthetic set, MIT).

    cargo build --release && python3 tools/eval_output.py [--data ../shared/data]

Recall: a value counts as masked when none of its digits (letters too, for e-mail and IBAN) is
left in clear beyond the kind's visible tail. Precision: of the masked findings, the share that
overlaps one of those four kinds of span (anything else masked is a false positive).
"""
import argparse, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KINDS = {"CREDIT_CARD", "PHONE_NUMBER", "EMAIL_ADDRESS", "IBAN_CODE"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--product", default="wallet-assistant")
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "guard"),
                    help="the guard binary to run (default: the release build)")
    args = ap.parse_args()
    rows = [json.loads(l) for l in open(os.path.join(args.data, "pii_presidio_synth.jsonl"), encoding="utf-8")]
    inp = "".join(json.dumps({"id": i, "text": r["text"]}, ensure_ascii=False) + "\n" for i, r in enumerate(rows))
    out = subprocess.run([args.binary, "screen-output", "--product", args.product, "--jsonl"],
                         input=inp.encode(), capture_output=True, cwd=ROOT, check=True).stdout.decode()
    verdicts = [json.loads(l) for l in out.splitlines()]
    values = masked = 0
    found = hit = 0
    misses = []
    for r, v in zip(rows, verdicts):
        text, clear = r["text"], v["text"]
        spans = [s for s in r["spans"] if s["type"] in KINDS]
        # Map masked findings back to the original text: masking keeps every char, so char
        # offsets are the same in both (internal names aside, which these rows do not have).
        for f in v["findings"]:
            found += 1
            if any(f["start"] < s["end"] and s["start"] < f["end"] for s in spans):
                hit += 1
        for s in spans:
            values += 1
            original = text[s["start"]:s["end"]]
            after = clear[s["start"]:s["end"]]
            secret = [c for c in original if c.isalnum() and c not in "@."]
            shown = [c for c, d in zip(original, after) if c.isalnum() and c == d]
            # The kind's visible tail (last four of a card or IBAN) may stay.
            if len(shown) <= 4 and len(shown) < len(secret) / 2:
                masked += 1
            else:
                misses.append((s["type"], original))
    print(f"values masked: {masked}/{values} = {100 * masked / values:.1f} %")
    print(f"masked findings that are one of the four kinds: {hit}/{found} = {100 * hit / max(found, 1):.1f} %")
    for m in misses[:20]:
        print("  missed", m)


if __name__ == "__main__":
    main()
