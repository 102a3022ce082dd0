"""Text classification family: train a classifier in pure Python to an accuracy target.

Seed failure: the base agent reached for fastText/scikit-learn (not
installed, no network), then trained something too slow and ran out of time
below the target. The template makes a labelled corpus from class
vocabularies with realistic overlap and label noise, sets the target a few
points below what multinomial naive Bayes reaches on it (so the target is
reachable with standard-library code in seconds, and a keyword rule falls
short), and grades predictions against labels only the verifier has. That is
level 1 of a 4-level ladder (:data:`LADDER`, :mod:`.ladder`): a layout found in the files, a predictor run on
unseen files, a large file within a time limit.
"""

from __future__ import annotations

import math
import random
import re
import sys
import textwrap
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from autoenv.families.base import TaskDraft, sha256_text, solve_sh, task_files, task_name
from autoenv.families.levels import load_ladder
from autoenv.families.text_classification import ladder

if TYPE_CHECKING:  # families read seed cases; they do not depend on the proposer
    from autoenv.shared.seed import SeedCase

NAME = "text-classification"
DESCRIPTION = "train a standard-library text classifier to an accuracy target within a time budget"
KEYWORDS = ("classif", "accuracy", "fasttext", "spam", "sentiment", "model", "train", "nlp", "timeout", "timed out")
CATEGORY = "machine-learning"
TAGS = ["python", "text-classification", "naive-bayes"]

THEMES = {
    "sms-spam": (
        "SMS messages",
        "label",
        "message",
        {
            "spam": (
                "free prize claim winner cash urgent txt offer won call now reply stop bonus credit loan voucher "
                "mobile award guaranteed exclusive 18+ entry click subscribe"
            ).split(),
            "ham": (
                "home later dinner tonight mum see you love thanks lunch ok sorry meeting tomorrow pick bus class "
                "going sure wait late coffee sleep weekend"
            ).split(),
        },
    ),
    "reviews": (
        "product reviews",
        "label",
        "review",
        {
            "positive": (
                "great love excellent perfect amazing happy recommend works sturdy beautiful fast comfortable "
                "brilliant favourite solid smooth reliable value delighted"
            ).split(),
            "negative": (
                "broke refund terrible poor waste disappointed cheap slow returned useless faulty awful flimsy missing "
                "worst annoying cracked leaking noisy"
            ).split(),
        },
    ),
    "headlines": (
        "news headlines",
        "category",
        "headline",
        {
            "sports": (
                "match goal league coach season striker final cup injury transfer tournament score champions defender "
                "keeper derby penalty"
            ).split(),
            "tech": (
                "startup chip software app cloud launch update smartphone ai data security network browser robot "
                "update developer quantum"
            ).split(),
            "food": (
                "recipe chef restaurant bake menu flavour vegan dessert harvest kitchen bakery spice tasting dinner "
                "cheese bread wine"
            ).split(),
        },
    ),
    "tickets": (
        "support tickets",
        "class",
        "text",
        {
            "billing": (
                "invoice charge refund payment card billed subscription price receipt overcharged plan renewal vat "
                "discount"
            ).split(),
            "bug": (
                "crash error broken freeze exception bug fails stuck blank loading glitch timeout corrupt reboot"
            ).split(),
            "account": (
                "password login reset email username locked verify profile signup two-factor delete account access"
            ).split(),
            "shipping": (
                "delivery parcel tracking courier shipped arrived late address package lost warehouse dispatch postage"
            ).split(),
        },
    ),
}

#: Level 1 is the task of earlier releases; levels 2-4 are :mod:`autoenv.families.text_classification.ladder`.
LADDER, DEFAULT_LEVEL = load_ladder(__file__)  # levels.toml beside this file

FILLER = (
    "the a to and of in is it for on my this that with was have be at not are you your we can will just so get "
    "about from all one up out if what there when which their more would time could been only also after "
    "today week please still really again back new other any some very here"
).split()

TOKEN = re.compile(r"[a-z0-9+\-]+")


def _text(rng: random.Random, words: list[str], others: list[str], strength: float) -> str:
    n = rng.randint(6, 18)
    out = []
    for _ in range(n):
        r = rng.random()
        if r < strength:
            out.append(rng.choice(words))
        elif r < strength + 0.08:
            out.append(rng.choice(others))
        else:
            out.append(rng.choice(FILLER))
    if rng.random() < 0.3:
        out[0] = out[0].capitalize()
    text = " ".join(out)
    return text + rng.choice(["", "", ".", "!", "?", " :)"])


def _tokens(text: str, bigrams: bool) -> list[str]:
    words = TOKEN.findall(text.lower())
    return words + ([a + "_" + b for a, b in zip(words, words[1:])] if bigrams else [])


def nb_accuracy(train: list[tuple[str, str]], test: list[tuple[str, str]], bigrams: bool) -> float:
    """Held-out accuracy of multinomial naive Bayes: what a competent standard-library solution reaches."""
    counts: dict[str, Counter] = defaultdict(Counter)
    docs: Counter = Counter()
    vocab: set[str] = set()
    for label, text in train:
        docs[label] += 1
        toks = _tokens(text, bigrams)
        counts[label].update(toks)
        vocab.update(toks)
    totals = {k: sum(v.values()) for k, v in counts.items()}
    n = sum(docs.values())
    correct = 0
    for label, text in test:
        toks = [t for t in _tokens(text, bigrams) if t in vocab]
        best = max(
            sorted(docs),
            key=lambda c: (
                math.log(docs[c] / n) + sum(math.log((counts[c][t] + 1) / (totals[c] + len(vocab))) for t in toks)
            ),
        )
        correct += best == label
    return correct / len(test)


def draw_rows(
    rng: random.Random, vocab: dict[str, list[str]], weights: list[float], strength: float, n: int, noise: float
) -> list[tuple[str, str]]:
    """``n`` (label, text) rows: a label by ``weights``, a text of its words at ``strength`` among the other classes'
    and filler; a share ``noise`` of the labels is replaced by a random class (label noise)."""
    classes = sorted(vocab)
    rows = []
    for _ in range(n):
        label = rng.choices(classes, weights=weights)[0]
        others = [w for c in classes if c != label for w in vocab[c]]
        shown = label if not noise or rng.random() > noise else rng.choice(classes)
        rows.append((shown, _text(rng, vocab[label], others, strength)))
    return rows


def corpus(
    rng: random.Random,
    vocab: dict[str, list[str]],
    weights: list[float],
    strength: float,
    n_train: int,
    n_test: int,
    noise: float = 0.03,
) -> tuple[list[tuple[str, str]], list[tuple[str, str]], float, float, float]:
    """Training and test rows, the class words made stronger until a constant prediction stays well below what
    naive Bayes reaches: (train, test, naive Bayes accuracy, majority share, the strength used)."""
    for _ in range(6):
        train = draw_rows(rng, vocab, weights, strength, n_train, noise)
        test = draw_rows(rng, vocab, weights, strength, n_test, noise)
        acc = min(nb_accuracy(train, test, False), nb_accuracy(train, test, True))
        majority = Counter(y for y, _ in test).most_common(1)[0][1] / len(test)
        if majority < acc - 0.12:
            break
        strength += 0.05
    return train, test, acc, majority, strength


def generate(case: SeedCase, rng: random.Random, level: int = DEFAULT_LEVEL) -> TaskDraft:
    """A task of ``level`` (:data:`LADDER`); level 1 draws exactly the tasks of earlier releases."""
    if level >= 2:
        return ladder.generate(case, rng, level, sys.modules[__name__])
    theme = rng.choice(sorted(THEMES))
    what, label_col, text_col, vocab = THEMES[theme]
    classes = sorted(vocab)
    strength = rng.uniform(0.18, 0.3)
    weights = [rng.uniform(0.5, 1.5) for _ in classes]

    n_train, n_test = rng.randint(1500, 3000), rng.randint(300, 500)
    train, test, acc, majority, strength = corpus(rng, vocab, weights, strength, n_train, n_test)
    threshold = max(0.6, min(0.95, math.floor((acc - 0.04) * 100) / 100))
    train_name, test_name, out_name = rng.choice(
        [("train.tsv", "test.tsv", "predictions.txt"), ("train_set.tsv", "test_set.tsv", "predicted.txt")]
    )
    train_text = f"{label_col}\t{text_col}\n" + "".join(f"{y}\t{t}\n" for y, t in train)
    test_text = f"id\t{text_col}\n" + "".join(f"{i + 1}\t{t}\n" for i, (_, t) in enumerate(test))
    labels_text = "id\tlabel\n" + "".join(f"{i + 1}\t{y}\n" for i, (y, _) in enumerate(test))
    label_list = ", ".join(f"`{c}`" for c in classes)
    instruction = textwrap.dedent(f"""\
        # Classify {what}

        Build a text classifier for {what}, in pure Python (standard library
        only: scikit-learn, numpy, pandas and fastText are **not** installed,
        and there is no network access).

        - `/app/data/{train_name}`: labelled training data. Tab-separated with a
          header row `{label_col}<TAB>{text_col}`; `{label_col}` is one of {label_list}.
        - `/app/data/{test_name}`: unlabelled rows. Tab-separated with a header row
          `id<TAB>{text_col}`.

        Texts never contain tab characters or newlines, and the files use no quoting.

        Train a model on the training data and write your predictions for the
        test rows to `/app/{out_name}`: exactly one line per row of `{test_name}`
        (excluding the header), in the same order, each line being one of the
        labels above and nothing else.

        Predictions are scored against hidden labels. The task is passed when the
        accuracy is at least **{threshold:.2f}**; a keyword rule or a constant
        prediction is not enough. Budget your time: the whole job should train and
        predict in well under a minute on one CPU core, so avoid exhaustive
        hyper-parameter searches. Do not modify the files in `/app/data/`.
        """)
    tests = textwrap.dedent(f'''\
        import hashlib
        from pathlib import Path

        PREDICTIONS = Path("/app/{out_name}")
        TEST_TSV = Path("/app/data/{test_name}")
        TEST_TSV_SHA256 = "{sha256_text(test_text)}"
        LABELS = Path(__file__).with_name("test_labels.tsv")
        CLASSES = set({sorted(set(classes))!r})
        THRESHOLD = {threshold:.2f}


        def hidden_labels():
            lines = LABELS.read_text().splitlines()[1:]
            return [line.split("\\t")[1].strip() for line in lines if line.strip()]


        def predictions():
            assert PREDICTIONS.exists(), "missing /app/{out_name}"
            lines = PREDICTIONS.read_text().splitlines()
            while lines and not lines[-1].strip():
                lines.pop()
            return [line.strip() for line in lines]


        def test_test_data_unchanged():
            assert hashlib.sha256(TEST_TSV.read_bytes()).hexdigest() == TEST_TSV_SHA256


        def test_one_prediction_per_row():
            assert len(predictions()) == len(hidden_labels())


        def test_labels_are_valid():
            preds = predictions()
            assert preds and set(preds) <= CLASSES, sorted(set(preds) - CLASSES)[:5]


        def test_accuracy_meets_threshold():
            labels, preds = hidden_labels(), predictions()
            assert len(preds) == len(labels)
            accuracy = sum(p == y for p, y in zip(preds, labels)) / len(labels)
            print(f"accuracy = {{accuracy:.4f}}")
            assert accuracy >= THRESHOLD, f"accuracy {{accuracy:.4f}} below {{THRESHOLD}}"
        ''')
    solution = solve_sh(
        textwrap.dedent(f'''\
        cat > /app/classify.py <<'PY'
        """Multinomial naive Bayes with Laplace smoothing (standard library only)."""
        import csv, math, re
        from collections import Counter

        TOKEN = re.compile(r"[a-z0-9+\\-]+")

        def read(path):
            with open(path, newline="", encoding="utf-8") as fh:
                return list(csv.reader(fh, delimiter="\\t", quoting=csv.QUOTE_NONE))

        rows = read("/app/data/{train_name}")[1:]
        docs, counts, vocab = Counter(), {{}}, set()
        for label, text in rows:
            docs[label] += 1
            toks = TOKEN.findall(text.lower())
            counts.setdefault(label, Counter()).update(toks)
            vocab.update(toks)
        totals = {{c: sum(v.values()) for c, v in counts.items()}}
        n = sum(docs.values())

        def predict(text):
            toks = [t for t in TOKEN.findall(text.lower()) if t in vocab]
            return max(sorted(docs), key=lambda c: math.log(docs[c] / n)
                       + sum(math.log((counts[c][t] + 1) / (totals[c] + len(vocab))) for t in toks))

        test = read("/app/data/{test_name}")[1:]
        with open("/app/{out_name}", "w") as out:
            for row in test:
                out.write(predict(row[1]) + "\\n")
        print(f"wrote {{len(test)}} predictions")
        PY
        python3 /app/classify.py
        ''')
    )
    name = task_name("text-classification", rng, theme)
    app = {f"data/{train_name}": train_text, f"data/{test_name}": test_text}
    hidden = {"test_labels.tsv": labels_text}
    files = task_files(
        case, NAME, CATEGORY, [*TAGS, theme], instruction, solution, tests, app=app, hidden=hidden, agent_timeout=180.0
    )
    stale = "".join(f"{y}\n" for y, _ in test)
    params = {
        **drawn(theme, classes, train, test, acc, majority, threshold),
        "leak_hint": None,
        "stale_output": (out_name, stale),
        "output_path": f"/app/{out_name}",
    }
    return TaskDraft(name=name, family="text-classification", files=files, params=params)


def drawn(
    theme: str, classes: list, train: list, test: list, acc: float, majority: float, threshold: float
) -> dict[str, Any]:
    """What every level records of its draw: the theme, the data's size and what Naive Bayes and the majority
    class score against the accuracy it asks for."""
    return {
        "theme": theme,
        "classes": len(classes),
        "train_rows": len(train),
        "test_rows": len(test),
        "nb_accuracy": round(acc, 4),
        "majority": round(majority, 4),
        "threshold": threshold,
    }
