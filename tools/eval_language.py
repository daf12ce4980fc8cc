#!/usr/bin/env python3
"""Score the language screen on the development split, side by side with general-purpose
language-ID detectors from PyPI, and time the whole process of each.

    cargo build --release
    pip install py3langid pycld2 lingua-language-detector
    python3 tools/eval_language.py [--data ../shared/data] [--product wallet-assistant]

Rows: every langid_* file, both sides of benign_hinglish_top.jsonl (its `langid` field) and
every benign_banking77.jsonl row as English. Classes: english and bengali should be accepted,
banglish and other rejected. A detector "accepts" when it answers en or bn.
"""
import argparse, json, os, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def load_rows(data):
    rows = []
    for name in sorted(os.listdir(data)):
        if name.startswith("langid_") and name.endswith(".jsonl"):
            for line in open(os.path.join(data, name), encoding="utf-8"):
                r = json.loads(line)
                rows.append((r["text"], r["label"], r["source"], r.get("lang")))
    for line in open(os.path.join(data, "benign_hinglish_top.jsonl"), encoding="utf-8"):
        r = json.loads(line)
        rows.append((r["text"], r["langid"], "hinglish_top", r.get("lang")))
    for line in open(os.path.join(data, "benign_banking77.jsonl"), encoding="utf-8"):
        r = json.loads(line)
        rows.append((r["text"], "english", "banking77", "en"))
    return rows


def run_guard(rows, product, binary):
    inp = "".join(json.dumps({"id": i, "text": t}, ensure_ascii=False) + "\n" for i, (t, *_rest) in enumerate(rows))
    t0 = time.perf_counter()
    out = subprocess.run([binary, "screen", "--product", product, "--jsonl"], input=inp.encode(),
                         capture_output=True, cwd=ROOT, check=True).stdout
    elapsed = time.perf_counter() - t0
    verdicts = [json.loads(l) for l in out.decode().splitlines()]
    assert [v["id"] for v in verdicts] == list(range(len(rows)))
    accepted = [v.get("reason") != "unsupported_language" for v in verdicts]
    return accepted, elapsed, verdicts


DETECTOR_SCRIPTS = {
    "py3langid": "import py3langid\nf=lambda t: py3langid.classify(t)[0]",
    "pycld2": "import pycld2\ndef f(t):\n    try:\n        ok,_,d=pycld2.detect(t)\n        return d[0][1][:2]\n    except Exception:\n        return 'un'",
    "lingua": "from lingua import LanguageDetectorBuilder\nD=LanguageDetectorBuilder.from_all_languages().build()\ndef f(t):\n    l=D.detect_language_of(t)\n    return l.iso_code_639_1.name.lower() if l else 'un'",
}


def run_detector(name, rows):
    """Run a detector in its own process (import and model load included), like the guard run."""
    script = DETECTOR_SCRIPTS[name] + (
        "\nimport sys,json\nfor line in sys.stdin:\n    print(f(json.loads(line)['text']))\n")
    inp = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t, *_ in rows)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", script], input=inp.encode(), capture_output=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        return None, elapsed
    langs = proc.stdout.decode().split("\n")[: len(rows)]
    return [l in ("en", "bn") for l in langs], elapsed


def score(rows, accepted):
    want = {"english": True, "bengali": True, "banglish": False, "other": False}
    table = {}
    for (text, label, source, lang), acc in zip(rows, accepted):
        ok, n = table.get(label, (0, 0))
        table[label] = (ok + (acc == want[label]), n + 1)
    return table


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--product", default="wallet-assistant")
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "guard"))
    ap.add_argument("--errors", type=int, default=0, help="print this many misclassified rows per class")
    ap.add_argument("--detectors", default="py3langid,pycld2,lingua")
    args = ap.parse_args()
    rows = load_rows(args.data)
    results = {}
    accepted, t_guard, verdicts = run_guard(rows, args.product, args.binary)
    results["guard"] = (score(rows, accepted), t_guard)
    for name in [d for d in args.detectors.split(",") if d]:
        acc, t = run_detector(name, rows)
        if acc is not None:
            results[name] = (score(rows, acc), t)
    classes = [("english", "English accepted"), ("bengali", "Bengali accepted"),
               ("banglish", "Banglish rejected"), ("other", "other rejected")]
    print(f"{'class':20}" + "".join(f"{n:>14}" for n in results))
    for label, title in classes:
        cells = []
        for name, (table, _) in results.items():
            ok, n = table.get(label, (0, 0))
            cells.append(f"{100.0 * ok / max(n, 1):9.2f}% {n:>4}")
        print(f"{title:20}" + "".join(f"{c:>14}" for c in cells))
    print(f"{'wall time (s)':20}" + "".join(f"{t:>14.2f}" for _, (_, t) in results.items()))
    others = [(t, n) for n, (_, t) in results.items() if n != "guard"]
    if others:
        fastest = min(others)
        print(f"guard / fastest detector ({fastest[1]}) whole-process time ratio: {t_guard / fastest[0]:.3f}  rows={len(rows)}")
    if args.errors:
        want = {"english": True, "bengali": True, "banglish": False, "other": False}
        shown = {}
        for (text, label, source, lang), acc, v in zip(rows, accepted, verdicts):
            if acc != want[label] and shown.get(label, 0) < args.errors:
                shown[label] = shown.get(label, 0) + 1
                det = [t.get("detail") for t in v.get("trace", []) if t["stage"] in ("banglish", "lang_id")]
                print(f"  [{label}/{lang}/{source}] {text[:90]!r} -> {v.get('language')} {det}")


if __name__ == "__main__":
    main()
