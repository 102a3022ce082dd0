"""text-classification above level 1: a layout found in the files, a predictor run on unseen rows, at scale.

Level 2 tells neither the data's layout nor the answer's: the training and test files are quoted CSV (commas,
quotes and line breaks inside texts, extra columns, labels written in mixed case with stray spaces) and the answer
takes the form of ``sample_submission.csv``. Level 3 adds ``/app/predict.py IN OUT``, which the tests run on unseen
files with corners (an empty text, unknown words only, CRLF line ends, a file with no rows). Level 4 adds a hidden
file of :data:`BIG_ROWS` rows the program must label within :data:`BIG_LIMIT_SEC`; it is generated inside the tests
by :data:`BIG_SOURCE` (the corpus's own recipe with an LCG of its own) rather than shipped.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
import textwrap
from types import ModuleType
from typing import TYPE_CHECKING, Any

from autoenv.families.base import TaskDraft, solve_sh, task_files, task_name
from autoenv.families.solver import fill_program, program_source

if TYPE_CHECKING:
    from autoenv.shared.seed import SeedCase

PROGRAM = "/app/predict.py"
BIG_ROWS = 8_000
#: Seconds the tests give the program for the large file: naive Bayes trains and labels it in about a second;
#: comparing each row with every training row (nearest neighbours, 16 million pairs) takes tens of seconds.
BIG_LIMIT_SEC = 10

#: The large hidden file's rows, generated in the tests and by the generator alike (texts as :func:`_text` writes
#: them, from an LCG of its own so any Python gives the same rows).
BIG_SOURCE = """\
def big_rows(seed, n, vocab, filler, strength, weights):
    state = [seed]

    def rnd():
        state[0] = (state[0] * 6364136223846793005 + 1442695040888963407) % 2 ** 64
        return (state[0] >> 11) / 2 ** 53

    def pick(items):
        return items[int(rnd() * len(items))]

    classes = sorted(vocab)
    total = sum(weights)
    rows = []
    for i in range(n):
        x, label = rnd() * total, classes[-1]
        for c, w in zip(classes, weights):
            if x < w:
                label = c
                break
            x -= w
        others = [w for c in classes if c != label for w in vocab[c]]
        words = []
        for _ in range(6 + int(rnd() * 13)):
            r = rnd()
            words.append(pick(vocab[label]) if r < strength else pick(others) if r < strength + 0.08 else pick(filler))
        rows.append((f"b{i:06d}", " ".join(words), label))
    return rows
"""


def big_rows(
    seed: int, n: int, vocab: dict[str, list[str]], filler: list[str], strength: float, weights: list[float]
) -> list[tuple]:
    scope: dict[str, Any] = {}
    exec(BIG_SOURCE, scope)  # noqa: S102 - our own source, the same text the tests run
    return scope["big_rows"](seed, n, vocab, filler, strength, weights)


def messy(rng: random.Random, text: str) -> str:
    """A text as exported by a help desk: now and then a quoted phrase, a comma list, a line break."""
    r = rng.random()
    if r < 0.08:
        return text.replace(" ", ", ", 1)
    if r < 0.14:
        return f'"{text}" she wrote'
    if r < 0.18:
        return text.replace(" ", "\n", 1)
    return text


def to_csv(rows: list[list[str]], terminator: str = "\n") -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator=terminator).writerows(rows)
    return out.getvalue()


def corners(texts: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """Rows no shipped file holds: an empty text, only unknown words, unicode, shouting, a very long text."""
    (y1, t1), (y2, t2), (y3, t3) = texts[:3]
    return [
        ("c-empty", "", y1),
        ("c-unknown", "qwzx blorft zzyzx ☃ ☃", y2),
        ("c-unicode", "Grüße — " + t3 + " ✓ café", y3),
        ("c-shout", t1.upper(), y1),
        ("c-long", " ".join([t2] * 40), y2),
    ]


def generate(case: SeedCase, rng: random.Random, level: int, g: ModuleType) -> TaskDraft:
    """A text-classification task of ``level`` >= 2 (:data:`~.generator.LADDER`); ``g`` is the generator module, for
    level 1's themes, text sampler and naive Bayes baseline."""
    NAME, nb_accuracy = g.NAME, g.nb_accuracy
    theme = rng.choice(sorted(g.THEMES))
    what, label_col, text_col, vocab = g.THEMES[theme]
    classes = sorted(vocab)
    strength = rng.uniform(0.18, 0.3)
    weights = [rng.uniform(0.5, 1.5) for _ in classes]

    train, test, acc, majority, strength = g.corpus(
        rng, vocab, weights, strength, rng.randint(1500, 2500), rng.randint(300, 400), noise=0
    )
    # the unseen file's rows: the target must hold for them too
    more = g.draw_rows(rng, vocab, weights, strength, 400, 0) if level >= 3 else []
    if more:
        acc = min(acc, nb_accuracy(train, more, False), nb_accuracy(train, more, True))
    threshold = max(0.6, min(0.95, math.floor((acc - 0.05) * 100) / 100))
    extra = rng.choice(["channel", "source", "queue"])
    columns = [text_col, "id", extra, label_col]
    rng.shuffle(columns)

    def row(ident: str, text: str, label: str | None) -> list[str]:
        cells = {"id": ident, text_col: text, extra: rng.choice(["web", "mail", "app", "phone"]), label_col: label}
        return [cells[c] or "" for c in columns if label is not None or c != label_col]

    def shown(label: str) -> str:
        return rng.choice([label, label, label.title(), label.upper(), f" {label}", f"{label} "])

    train_rows = [columns] + [row(f"t{i:05d}", messy(rng, t), shown(y)) for i, (y, t) in enumerate(train)]
    test_columns = [c for c in columns if c != label_col]
    test_ids = [f"{rng.choice('mqrx')}-{n}" for n in rng.sample(range(1000, 99999), len(test))]
    test_rows = [test_columns] + [row(i, messy(rng, t), None) for i, (_, t) in zip(test_ids, test)]
    sample_sub = to_csv([["id", label_col]] + [[i, rng.choice(classes)] for i in test_ids[:4]])
    app = {
        "data/train.csv": to_csv(train_rows),
        "data/test.csv": to_csv(test_rows),
        "data/sample_submission.csv": sample_sub,
    }
    expected = {"submission.csv": [[i, y] for i, (y, _) in zip(test_ids, test)]}
    instruction = textwrap.dedent(f"""\
        # Classify {what}

        `/app/data/` holds {what} exported from the help desk: `train.csv` (labelled) and
        `test.csv` (not labelled). Build a classifier in pure Python (standard library only:
        scikit-learn, numpy, pandas and fastText are **not** installed, and there is no network
        access), train it on `train.csv` and label every row of `test.csv`.

        Write `/app/submission.csv` in the format of `/app/data/sample_submission.csv`: one
        row per row of `test.csv`, in the same order, each label written as the sample
        writes labels. Find the files' layout in the files themselves.

        The labels are scored against hidden ones: the task is passed when the accuracy is at
        least **{threshold:.2f}** (a keyword rule or a constant label is not enough). Keep the
        whole job well under a minute on one CPU core. Do not modify the files in `/app/data/`.
        """)
    hidden: dict[str, str] = {}
    if level >= 3:
        instruction += textwrap.dedent(f"""
            Also write `{PROGRAM}`: `python3 {PROGRAM} IN OUT` must write to `OUT` the labels
            of the rows of any file `IN` laid out as `test.csv`, in the same format as
            `/app/submission.csv`, using what it learns from `/app/data/train.csv`. The tests
            run it on files you do not see (the same accuracy target over each file's rows),
            with every corner such files have: an empty text, texts of words never seen in
            training, non-ASCII letters, line breaks inside quoted texts, lines ending in
            `\\r\\n`, a file with no rows at all.
            """)
        extra_rows = corners(more)
        rows_1 = [(f"h-{k}", t, y) for k, (y, t) in enumerate(more)] + extra_rows
        rng.shuffle(rows_1)
        hidden["hidden_1.csv"] = to_csv(
            [test_columns] + [row(i, messy(rng, t), None) for i, t, _ in rows_1], terminator="\r\n"
        )
        hidden["hidden_empty.csv"] = to_csv([test_columns])
        expected["hidden_1.csv"] = [[i, y] for i, _, y in rows_1]
        expected["hidden_empty.csv"] = []
    big: dict[str, Any] | None = None
    if level >= 4:
        big = {
            "seed": rng.randint(1, 10**9),
            "rows": BIG_ROWS,
            "vocab": vocab,
            "strength": strength,
            "weights": weights,
            "columns": test_columns,
            "text_col": text_col,
            "limit": BIG_LIMIT_SEC,
        }
        instruction += textwrap.dedent(f"""
            The help desk labels its whole backlog with it: the tests also run it on a file of
            {BIG_ROWS:,} rows and allow it {BIG_LIMIT_SEC} seconds on one CPU core (training included).
            """)
    tests = test_text(expected, label_col, classes, threshold, big, g.FILLER)
    source = fill_program(program_source(__file__), {"program": PROGRAM if level >= 3 else None})
    solution = solve_sh(f"cat > {PROGRAM} <<'PY'\n{source}PY\npython3 {PROGRAM}\nhead -n 5 /app/submission.csv\n")
    files = task_files(
        case,
        NAME,
        g.CATEGORY,
        [*g.TAGS, theme],
        instruction,
        solution,
        tests,
        app=app,
        hidden=hidden,
        agent_timeout=180.0,
        verifier_timeout=180.0 if level >= 4 else 60.0,
    )
    params = {
        "level": level,
        **g.drawn(theme, classes, train, test, acc, majority, threshold),
        "leak_hint": None,
        "stale_output": None,
        "output_path": "/app/submission.csv",
    }
    return TaskDraft(name=task_name(NAME, rng, f"{theme}-l{level}"), family=NAME, files=files, params=params)


def test_text(
    expected: dict[str, list[list[str]]],
    label_col: str,
    classes: list[str],
    threshold: float,
    big: dict | None,
    filler: list[str],
) -> str:
    """The tests: the submission's form and accuracy, then the program on every hidden file (and the large one)."""
    text = textwrap.dedent(f"""\
        import csv
        import hashlib
        import io
        import json
        import time
        from pathlib import Path

        import pytest
        from agentcall import agent_folder, read_agent_file, run_agent  # the agent's program runs as nobody

        EXPECTED = json.loads({json.dumps(expected)!r})
        HEADER = ["id", {label_col!r}]
        CLASSES = {classes!r}
        THRESHOLD = {threshold:.2f}


        def check(text, want):
            rows = list(csv.reader(io.StringIO(text)))
            assert rows and rows[0] == HEADER, rows[:1]
            got = rows[1:]
            assert [r[0] for r in got] == [i for i, _ in want], "one row per input row, in the same order"
            labels = [r[1] if len(r) > 1 else "" for r in got]
            assert set(labels) <= set(CLASSES), sorted(set(labels) - set(CLASSES))[:5]
            if want:
                accuracy = sum(g == y for g, (_, y) in zip(labels, want)) / len(want)
                print(f"accuracy = {{accuracy:.4f}}")
                assert accuracy >= THRESHOLD, f"accuracy {{accuracy:.4f}} below {{THRESHOLD}}"


        def test_submission():
            path = Path("/app/submission.csv")
            assert path.exists(), "missing /app/submission.csv"
            check(path.read_text(encoding="utf-8"), EXPECTED["submission.csv"])
        """)
    if len(expected) > 1:
        text += textwrap.dedent(f"""\


            def run_program(data, timeout=60):
                work = agent_folder({{"in.csv": data}}, writable=True)
                out = run_agent(["python3", "{PROGRAM}", str(work / "in.csv"), str(work / "out.csv")], cwd="/app",
                                text=True, timeout=timeout)
                assert out.returncode == 0, out.stderr[-2000:]
                return read_agent_file(work / "out.csv")


            @pytest.mark.parametrize("name", sorted(set(EXPECTED) - {{"submission.csv"}}))
            def test_program_on_unseen_file(name):
                check(run_program(Path(__file__).with_name(name).read_bytes()), EXPECTED[name])
            """)
    if big is not None:
        text += BIG_SOURCE.join(["\n\n", "\n\n"]) + textwrap.dedent(f"""\
            BIG = json.loads({json.dumps(big)!r})


            def test_program_on_a_large_file_in_time():
                rows = big_rows(BIG["seed"], BIG["rows"], BIG["vocab"], {filler!r}, BIG["strength"], BIG["weights"])
                out = io.StringIO()
                writer = csv.writer(out, lineterminator="\\n")
                writer.writerow(BIG["columns"])
                for ident, text, _ in rows:
                    cells = {{"id": ident, BIG["text_col"]: text}}
                    writer.writerow([cells.get(c, "web") for c in BIG["columns"]])
                started = time.monotonic()
                try:
                    got = run_program(out.getvalue().encode(), timeout=BIG["limit"])
                except Exception as exc:  # the broker's timeout
                    pytest.fail(f"no labels for {{BIG['rows']}} rows within {{BIG['limit']}} s: {{exc!r}}")
                assert time.monotonic() - started < BIG["limit"]
                check(got, [[ident, label] for ident, _, label in rows])
            """)
    return text
