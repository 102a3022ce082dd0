#!/bin/bash
set -euo pipefail
cd /app
cat > /app/classify.py <<'PY'
#!/usr/bin/env python3
"""Multinomial naive Bayes spam filter (pure Python, Laplace smoothing)."""

import csv
import math
import re
from collections import Counter

TOKEN = re.compile(r"[a-z0-9£$']+|[!?]")


def tokens(text):
    return TOKEN.findall(text.lower())


def read_tsv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def train(rows, alpha=1.0):
    doc_counts = Counter()
    word_counts = {}
    vocab = set()
    for row in rows:
        label = row["label"]
        doc_counts[label] += 1
        counts = word_counts.setdefault(label, Counter())
        for tok in tokens(row["text"]):
            counts[tok] += 1
            vocab.add(tok)
    total_docs = sum(doc_counts.values())
    model = {}
    for label, counts in word_counts.items():
        denom = sum(counts.values()) + alpha * (len(vocab) + 1)
        model[label] = (
            math.log(doc_counts[label] / total_docs),
            {w: math.log((c + alpha) / denom) for w, c in counts.items()},
            math.log(alpha / denom),
        )
    return model


def predict(model, text):
    best, best_score = None, -math.inf
    for label in sorted(model):
        prior, logp, unseen = model[label]
        score = prior + sum(logp.get(tok, unseen) for tok in tokens(text))
        if score > best_score:
            best, best_score = label, score
    return best


def main():
    model = train(read_tsv("/app/data/train.tsv"))
    test_rows = read_tsv("/app/data/test.tsv")
    with open("/app/predictions.txt", "w") as out:
        for row in test_rows:
            out.write(predict(model, row["text"]) + "\n")
    print(f"wrote {len(test_rows)} predictions")


if __name__ == "__main__":
    main()
PY
python3 /app/classify.py
