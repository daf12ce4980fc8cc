#!/usr/bin/env python3
"""Rebuild the language wordlists in wordlists/ from their sources, deterministically.

    pip install wordfreq==3.1.1
    python3 tools/build_wordlists.py [--data ../shared/data]

Sources (see wordlists/README.md for the licences):
  english.txt              wordfreq 3.1.1 'en' top list (data CC BY-SA 4.0), with Zipf frequency
  banglish.txt             tools/wordlist_sources/banglish_chat.txt (ours, CC0)
                           + Dakshina bn romanizations, development split (CC BY-SA 4.0)
  romanized-other.txt      tools/wordlist_sources/hinglish_chat.txt (ours, CC0)
                           + Dakshina romanizations of the other Indic languages (CC BY-SA 4.0)
A Dakshina word is kept when it occurs in at least MIN_COUNT different rows (so no single row
decides a word) and is not a common English word (Zipf < ENGLISH_ZIPF_MAX).
"""
import argparse, collections, json, os, re, sys

import wordfreq

ENGLISH_TOP_N = 50000
MIN_COUNT = 2
ENGLISH_ZIPF_MAX = 3.6
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TOKEN = re.compile(r"[A-Za-z]+")


def hand_list(name):
    words = []
    with open(os.path.join(HERE, "wordlist_sources", name), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0]
            words.extend(w.lower() for w in line.split() if TOKEN.fullmatch(w))
    return set(words)


def dakshina_counts(data_dir):
    bn, other = collections.Counter(), collections.Counter()
    with open(os.path.join(data_dir, "langid_dakshina.jsonl"), encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row.get("script") != "Latn":
                continue
            toks = set(t.lower() for t in TOKEN.findall(row["text"]))
            (bn if row["native_lang"] == "bn" else other).update(toks)
    return bn, other


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    args = ap.parse_args()
    out_dir = os.path.join(ROOT, "wordlists")

    english = [w for w in wordfreq.top_n_list("en", ENGLISH_TOP_N * 2) if TOKEN.fullmatch(w)]
    english = english[:ENGLISH_TOP_N]
    with open(os.path.join(out_dir, "english.txt"), "w", encoding="utf-8") as f:
        f.write("# English words with their Zipf frequency (log10 per billion words).\n")
        f.write("# From wordfreq 3.1.1 (Robyn Speer), data CC BY-SA 4.0; includes SUBTLEX data\n")
        f.write("# (credit: the SUBTLEX authors). Rebuild: python3 tools/build_wordlists.py\n")
        for w in english:
            f.write(f"{w.lower()} {wordfreq.zipf_frequency(w, 'en'):.2f}\n")

    def common_english(w):
        return wordfreq.zipf_frequency(w, "en") >= ENGLISH_ZIPF_MAX

    bn_counts, other_counts = dakshina_counts(args.data)
    bn_hand, hi_hand = hand_list("banglish_chat.txt"), hand_list("hinglish_chat.txt")
    bn_words = set(bn_hand)
    for w, n in bn_counts.items():
        if n >= MIN_COUNT and len(w) > 1 and not common_english(w) and n >= other_counts[w]:
            bn_words.add(w)
    other_words = set(hi_hand)
    for w, n in other_counts.items():
        if n >= MIN_COUNT and len(w) > 1 and not common_english(w) and n > bn_counts[w]:
            other_words.add(w)

    header = (
        "# Derived from Google Dakshina v1.0 romanizations (development split of ../shared/data),\n"
        "# CC BY-SA 4.0, so this list is CC BY-SA 4.0 too; plus hand-written chat words (CC0).\n"
        "# Rebuild: python3 tools/build_wordlists.py\n"
    )
    with open(os.path.join(out_dir, "banglish.txt"), "w", encoding="utf-8") as f:
        f.write("# Banglish (Bangla in Latin letters) words, lower case, one per line.\n" + header)
        for w in sorted(bn_words):
            f.write(w + "\n")
    with open(os.path.join(out_dir, "romanized-other.txt"), "w", encoding="utf-8") as f:
        f.write("# Romanized Hindi, Urdu and other Indic words (not Bangla), lower case.\n" + header)
        for w in sorted(other_words):
            f.write(w + "\n")
    print(f"english {len(english)}  banglish {len(bn_words)}  romanized-other {len(other_words)}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
