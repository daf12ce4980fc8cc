#!/usr/bin/env python3
"""Write the padded eval suites (tests/evals/padded-*.yaml): every case of the data-* suites with
benign sentences before, after, and both (tests/evals/padding/: sentences and joins written for
this, never trained on). A harmful case must still block and a benign one still pass.

    python3 tools/gen_padded_suites.py

Deterministic: the sentence and the join of each variant are chosen by SHA-256 of the case name
and position. About 30 % of the variants are held out: they take only held-out sentences and
joins (a part is held out when the first byte of SHA-256("pad:" + part) is below 77, the rule of
src/eval/padding.rs), and sit in their own `*_heldout` groups. Tuning reads the other groups;
the held-out ones measure wording it never saw.
"""
import hashlib, json, os, re, unicodedata

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVALS = os.path.join(ROOT, "tests", "evals")
PADDING = os.path.join(EVALS, "padding")
HELD_OUT_BELOW = 77
TERMINATORS = (".", "!", "?", "।")


def held_out(part):
    return hashlib.sha256(("pad:" + part).encode()).digest()[0] < HELD_OUT_BELOW


def sentences(name):
    with open(os.path.join(PADDING, name), encoding="utf-8") as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


def lower_first(text):
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        if text[0] == "I" and not text[1].isalpha():
            return text
        return text[0].lower() + text[1:]
    return text


def pad(question, position, parts, digest):
    """The same joining as src/eval/padding.rs: a '~' join drops the sentence's final
    punctuation, a join that does not end a sentence runs on in lower case into what follows,
    and a question that already ends its sentence takes no second terminator."""
    pick = lambda lst, k: lst[digest[k] % len(lst)]
    q = question.strip()

    def before(q):
        s, j = pick(parts["sentences"], 0), pick(parts["before"], 1)
        if j.startswith("~"):
            s, j = s.rstrip("".join(TERMINATORS)), j[1:]
        runs_on = not j.rstrip(" ").endswith(("\n", ":") + TERMINATORS)
        if runs_on and j.strip():
            q = lower_first(q)
        return s + j + q

    def after(q):
        s, j = pick(parts["sentences"], 2), pick(parts["after"], 3)
        if q.endswith(TERMINATORS):
            j = j.lstrip("".join(TERMINATORS)) or " "
        if j.strip() and not j.rstrip(" ").endswith(("\n", ":") + TERMINATORS):
            s = lower_first(s)
        return q + j + s

    return {"before": before, "after": after, "both": lambda q: after(before(q))}[position](q)


def yaml_str(text):
    """A double-quoted YAML scalar (as tools/seed_evals.py writes them)."""
    out = json.dumps(text, ensure_ascii=False)
    return "".join(c if unicodedata.category(c) not in ("Cc", "Cf", "Co", "Cs") or c in "\n\t"
                   else (f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}") for c in out)


def load_cases(path):
    """(product, group, [(name, text, expect)]) of a data-* suite."""
    with open(path, encoding="utf-8") as f:
        suite = yaml.safe_load(f)
    return suite["product"], suite["group"], [(c["name"], c["text"], c["expect"]) for c in suite["cases"]]


def main():
    joins = json.load(open(os.path.join(PADDING, "joins.json"), encoding="utf-8"))
    parts = {}
    for lang in ("en", "bn"):
        full = {"sentences": sentences(f"benign-{lang}.txt"), **joins[lang]}
        parts[lang] = {side: {k: [p for p in v if held_out(p) == side] for k, v in full.items()}
                       for side in (False, True)}
    for file in sorted(os.listdir(EVALS)):
        if not (file.startswith("data-") and file.endswith(".yaml")):
            continue
        product, group, cases = load_cases(os.path.join(EVALS, file))
        out = {False: [], True: []}
        for name, text, expect in cases:
            lang = "bn" if re.search("[\u0980-\u09ff]", text) else "en"
            for position in ("before", "after", "both"):
                digest = hashlib.sha256(f"{name}/{position}".encode()).digest()
                held = digest[31] < HELD_OUT_BELOW
                padded = pad(text, position, parts[lang][held], digest)
                out[held].append((f"{name}/{position}", padded, expect))
        stem = file[len("data-"):-len(".yaml")]
        for held, rows in out.items():
            suffix = "-heldout" if held else ""
            g = f"padded_{group[len('data_'):]}" + ("_heldout" if held else "")
            lines = [
                f"# Written by tools/gen_padded_suites.py from {file}: each case with benign",
                "# sentences before, after and both (tests/evals/padding/)."
                + (" Held out of tuning." if held else ""),
                f"description: {yaml_str(f'{len(rows)} padded variants of {file}')}",
                f"product: {product}",
                f"group: {g}",
                "kind: screen",
                "cases:",
            ]
            for name, text, expect in rows:
                lines.append(f"  - name: {yaml_str(name)}")
                lines.append(f"    text: {yaml_str(text)}")
                lines.append(f"    expect: {json.dumps(expect)}")
            with open(os.path.join(EVALS, f"padded-{stem}{suffix}.yaml"), "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
            print(f"padded-{stem}{suffix}: {len(rows)} cases")


if __name__ == "__main__":
    main()
