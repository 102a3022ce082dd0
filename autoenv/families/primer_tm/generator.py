"""Primer design family: melting temperatures and GC content of PCR primers.

Seed failure: the base agent had no Python in its image, spent its budget
trying to install it, and never computed a melting temperature. Half of the
variants (always, when the seed case says Python was missing) remove Python
from the image and grade with a shell verifier, so the skill trained is doing
the arithmetic with the tools that are there (awk). The formula (Wallace rule
for short primers; the basic or the salt-adjusted GC formula for longer
ones), the salt concentration, the pair tolerance and the FASTA layout
(wrapped lines, lower case) vary.

Levels 2-4 (:data:`LADDER`, :mod:`.ladder`) ask for a program the tests run on unseen FASTA files, leave the rules
to the lab's protocol under ``/app/protocol/`` and pair primers by name; level 1 is the task above, unchanged.
Level 5 (:mod:`.pools`) is a task of its own shape: split a multiplex panel into the kit's pools, a hard search.
"""

from __future__ import annotations

import random
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autoenv.families.base import (
    TaskDraft,
    dockerfile,
    pytest_test_sh,
    sha256_text,
    solve_sh,
    task_files,
    task_name,
    task_toml,
)
from autoenv.families.levels import load_ladder
from autoenv.families.primer_tm import ladder, pools
from autoenv.families.primer_tm.ladder import tm
from autoenv.families.solver import fill_program, program_source
from autoenv.grading import AGENTCALL

if TYPE_CHECKING:  # families read seed cases; they do not depend on the proposer
    from autoenv.shared.seed import SeedCase

NAME = "primer-tm"
DESCRIPTION = "melting temperatures and GC content of PCR primers, with or without Python"
KEYWORDS = ("primer", "melting", "tm", "pcr", "dna", "bioinformatics", "gc content", "awk", "no python")

GENES = ["GAPDH", "ACTB", "TP53", "MYC", "EGFR", "KRAS", "BRCA1", "VEGFA", "IL6", "TNF", "CDK2", "SOX2"]
NO_PYTHON_RUN = "rm -f /usr/bin/python3* /usr/local/bin/python3* /usr/bin/python /usr/local/bin/python"

LADDER, DEFAULT_LEVEL = load_ladder(__file__)  # levels.toml beside this file


def _primer(rng: random.Random, n: int, gc_bias: float) -> str:
    return "".join(rng.choice("GC") if rng.random() < gc_bias else rng.choice("AT") for _ in range(n))


def generate(case: SeedCase, rng: random.Random, level: int = DEFAULT_LEVEL) -> TaskDraft:
    """A primer-tm task of ``level`` (:data:`LADDER`); level 1 draws exactly the tasks of earlier releases."""
    if level >= 5:  # the panel's pools: a task of its own shape (pools.py), drawn from the same stream
        return pools.generate(case, rng, family=NAME)
    words = (case.failure_mode + " " + case.target_skill + " " + case.trajectory).lower()
    no_python = (
        "python" in words
        and any(w in words for w in ("lack", "no python", "without python", "missing", "not installed"))
    ) or rng.random() < 0.5
    formula = rng.choice(["basic", "salt"])
    na = rng.choice([0.05, 0.1, 0.2])
    short_below = 14
    max_delta = rng.choice([2.0, 3.0, 4.0, 5.0])
    n_pairs = rng.randint(6, 12)
    primers: list[tuple[str, str]] = []
    for i in range(n_pairs):
        for _ in range(50):  # keep every pair clear of the tolerance edge
            lf, lr = rng.randint(10, 30), rng.randint(10, 30)
            f, r = _primer(rng, lf, rng.uniform(0.3, 0.7)), _primer(rng, lr, rng.uniform(0.3, 0.7))
            delta = abs(tm(f, formula, na, short_below) - tm(r, formula, na, short_below))
            if abs(delta - max_delta) > 0.25 and abs(round(delta, 1) - max_delta) > 0.15:
                break
        tag = f"{rng.choice(GENES)}-{i + 1:02d}"
        primers += [(f"{tag}_F", f), (f"{tag}_R", r)]
    fasta_lines = []
    for name, seq in primers:
        fasta_lines.append(
            f">{name} {rng.choice(['forward', 'reverse'] if name.endswith('_F') else ['reverse'])} primer"
        )
        shown = seq.lower() if rng.random() < 0.3 else seq
        width = rng.choice([60, 60, 12, 16])
        fasta_lines += [shown[k : k + width] for k in range(0, len(shown), width)]
    fasta = "\n".join(fasta_lines) + "\n"

    rows = []
    for name, seq in primers:
        gc = 100 * (seq.count("G") + seq.count("C")) / len(seq)
        rows.append((name, len(seq), round(gc, 1), round(tm(seq, formula, na, short_below), 1)))
    pairs = []
    for name, _ in primers[::2]:
        tag = name[:-2]
        delta = abs(
            tm(dict(primers)[f"{tag}_F"], formula, na, short_below)
            - tm(dict(primers)[f"{tag}_R"], formula, na, short_below)
        )
        pairs.append((tag, round(delta, 1), "yes" if delta <= max_delta else "no"))

    long_rule = _long_rule(formula, na)
    tools = (
        (
            "Python is **not** available in this environment (and there is no network to install it): use the "
            "shell and the standard tools that are there (`awk`, `sed`, `sort`, ...)."
        )
        if no_python
        else "Use whatever you like from the environment (Python 3 is available; there is no network)."
    )
    instruction = textwrap.dedent(f"""\
        # Primer melting temperatures

        `/app/primers.fasta` holds {len(primers)} PCR primers in FASTA format, as
        forward/reverse pairs named `<TAG>_F` and `<TAG>_R`. A record starts with a
        `>` header line (the primer name is the first word after `>`); its
        sequence may be split over several lines and may be in lower case.

        For every primer compute, from its sequence (`N` = length, `A`, `C`, `G`,
        `T` = base counts):

        - `gc_percent`: `100 * (G + C) / N`;
        - `tm` (melting temperature, °C): for primers shorter than {short_below} bases the
          Wallace rule `Tm = 2 * (A + T) + 4 * (G + C)`; for {short_below} bases or more
          {long_rule}.

        Write `/app/tm_report.tsv` (tab-separated): the header
        `name<TAB>length<TAB>gc_percent<TAB>tm`, then one line per primer in file
        order, with `gc_percent` and `tm` rounded to 1 decimal place.

        Then write `/app/pairs.tsv`: the header `pair<TAB>delta_tm<TAB>compatible`,
        then one line per pair (in file order) with the pair's `<TAG>`, the absolute
        difference of the two (unrounded) melting temperatures rounded to 1 decimal,
        and `yes` if that difference is at most {max_delta:g} °C, else `no`.

        {tools} Values are checked to within 0.05. Do not modify `/app/primers.fasta`.
        """)
    expected_tm = "name\tlength\tgc_percent\ttm\n" + "".join(
        f"{n}\t{length}\t{g:.1f}\t{t:.1f}\n" for n, length, g, t in rows
    )
    expected_pairs = "pair\tdelta_tm\tcompatible\n" + "".join(f"{p}\t{d:.1f}\t{c}\n" for p, d, c in pairs)
    files: dict[str, str] = {}
    if no_python:
        files["environment/Dockerfile"] = dockerfile(
            base="debian:bookworm-slim", pytest=False, run=[NO_PYTHON_RUN], copy_app=True
        )
        files["tests/test.sh"] = _shell_verifier(sha256_text(fasta), expected_tm, expected_pairs)
        files["solution/solve.sh"] = solve_sh(awk_solution(formula, na, short_below, max_delta))
    else:
        files["environment/Dockerfile"] = dockerfile()
        files["tests/test.sh"] = pytest_test_sh()
        files["tests/agentcall.py"] = AGENTCALL
        files["tests/test_outputs.py"] = _pytest_verifier(sha256_text(fasta), rows, pairs)
        files["solution/solve.sh"] = solve_sh(_python_solution(formula, na, short_below, max_delta))
    files.update(
        {
            "instruction.md": instruction,
            "task.toml": task_toml(
                family="primer-tm",
                seed_case=case.id,
                category="bioinformatics",
                tags=["bioinformatics", "pcr", "melting-temperature", "awk" if no_python else "python"],
            ),
            "environment/app/primers.fasta": fasta,
        }
    )
    if level >= 2:
        return _above_level_one(case, rng, level, primers, formula, na, short_below, max_delta)
    name = task_name("primer-tm", rng, ("awk-" if no_python else "") + formula)
    probe = rows[-1]
    params: dict[str, Any] = {
        "no_python": no_python,
        "formula": formula,
        "na": na,
        "max_delta": max_delta,
        "pairs": n_pairs,
        "leak_hint": None if no_python else f"tm {probe[3]!r} for {probe[0]}",
        "stale_output": [("tm_report.tsv", expected_tm), ("pairs.tsv", expected_pairs)],
        "output_path": "/app/tm_report.tsv",
    }
    return TaskDraft(name=name, family="primer-tm", files=files, params=params)


def _above_level_one(
    case: SeedCase,
    rng: random.Random,
    rung: int,
    primers: list[tuple[str, str]],
    formula: str,
    na: float,
    short_below: int,
    max_delta: float,
) -> TaskDraft:
    """Levels 2-4 (:mod:`.ladder`): Python is there (the tests run the solver's program through the broker)."""
    max_delta = float(int(max_delta) + int(max_delta) % 2)  # even: a Wallace pair can sit exactly on it
    if rung >= 3:
        short_below = rng.choice([12, 14, 16])
    if rung >= 4:  # pairs found by name: shuffled, and two primers whose partner is missing
        for i in range(2):
            end = rng.choice("FR")
            primers.append((f"{rng.choice(GENES)}-{90 + i}_{end}", _primer(rng, rng.randint(15, 28), 0.5)))
        rng.shuffle(primers)
    text = ladder.fasta(primers, rng)
    rows, pairs = ladder.report(primers, formula, na, short_below, max_delta)
    hidden_sets = ladder.hidden_records(rng, short_below, max_delta, by_name=rung >= 4)
    hidden = {
        name: ladder.fasta(records, rng, crlf="crlf" in name, blank="crlf" in name)
        for name, records in hidden_sets.items()
    }
    expected = {
        name: ladder.report(records, formula, na, short_below, max_delta) for name, records in hidden_sets.items()
    }
    if rung >= 3:
        told = ladder.protocol_told()
        app = {
            "primers.fasta": text,
            ladder.CONF: ladder.conf(rng, formula, na, short_below, max_delta, level=rung),
            ladder.METHODS: ladder.methods(rung),
        }
    else:
        told = _rules_text(formula, na, short_below, max_delta)
        app = {"primers.fasta": text}
    params = ladder.program_params(rung, formula, na, short_below, max_delta)
    program = fill_program(program_source(str(Path(__file__).with_name("recipe.py"))), params)
    solution = solve_sh(
        f"mkdir -p /app\ncat > {ladder.PROGRAM} <<'TMCALC'\n{program}TMCALC\n"
        f"python3 {ladder.PROGRAM} /app/primers.fasta /app\ncat /app/tm_report.tsv /app/pairs.tsv\n"
    )
    tests = _pytest_verifier(sha256_text(text), rows, pairs) + ladder.tests(expected)
    files = task_files(
        case,
        NAME,
        "bioinformatics",
        ["bioinformatics", "pcr", "melting-temperature", "python"],
        ladder.instruction(rung, told, len(primers)),
        solution,
        tests,
        app=app,
        hidden=hidden,
    )
    expected_tm = "name\tlength\tgc_percent\ttm\n" + "".join(f"{n}\t{ln}\t{g:.1f}\t{t:.1f}\n" for n, ln, g, t in rows)
    expected_pairs = "pair\tdelta_tm\tcompatible\n" + "".join(f"{p}\t{d:.1f}\t{c}\n" for p, d, c in pairs)
    params = {
        "no_python": False,
        "formula": formula,
        "na": na,
        "max_delta": max_delta,
        "short_below": short_below,
        "pairs": len(pairs),
        "leak_hint": f"tm {rows[-1][3]!r} for {rows[-1][0]}",
        "stale_output": [("tm_report.tsv", expected_tm), ("pairs.tsv", expected_pairs)],
        "output_path": "/app/tm_report.tsv",
    }
    return TaskDraft(name=task_name("primer-tm", rng, f"l{rung}-{formula}"), family=NAME, files=files, params=params)


def _rules_text(formula: str, na: float, short_below: int, max_delta: float) -> str:
    """Level 1's rules, as levels 2's instruction tells them."""
    return textwrap.dedent(f"""\
        For every primer compute, from its sequence (`N` = length, `A`, `C`, `G`, `T` = base counts), `tm`
        (melting temperature, °C): for primers shorter than {short_below} bases the Wallace rule
        `Tm = 2 * (A + T) + 4 * (G + C)`; for {short_below} bases or more {_long_rule(formula, na)}.
        The tolerance of a pair is {max_delta:g} °C.
        """)


def _long_rule(formula: str, na: float) -> str:
    if formula == "basic":
        return "`Tm = 64.9 + 41 * (G + C - 16.4) / N`"
    return (
        f"the salt-adjusted formula `Tm = 81.5 + 16.6 * log10([Na+]) + 0.41 * GC% - 675 / N` with `[Na+] = {na}` "
        f"(mol/L; `log10` is the base-10 logarithm, `GC%` the GC content in percent)"
    )


AWK_PROGRAM = r"""
function flush() { if (name != "") { n++; names[n] = name; seqs[n] = seq } }
/^>/ { flush(); split(substr($0, 2), w, /[ \t]+/); name = w[1]; seq = ""; next }
{ line = toupper($0); gsub(/[^ACGT]/, "", line); seq = seq line }
END {
  flush()
  print "name\tlength\tgc_percent\ttm" > tmfile
  print "pair\tdelta_tm\tcompatible" > pairfile
  for (i = 1; i <= n; i++) {
    s = seqs[i]; len = length(s); at = 0; gc = 0
    for (k = 1; k <= len; k++) { b = substr(s, k, 1); if (b == "A" || b == "T") at++; else gc++ }
    if (len < short) t = 2 * at + 4 * gc
    else if (formula == "basic") t = 64.9 + 41 * (gc - 16.4) / len
    else t = 81.5 + 16.6 * log(na) / log(10) + 0.41 * (100 * gc / len) - 675 / len
    tms[names[i]] = t
    printf "%s\t%d\t%.1f\t%.1f\n", names[i], len, 100 * gc / len, t > tmfile
  }
  for (i = 1; i <= n; i++) {
    nm = names[i]
    if (nm ~ /_F$/) {
      tag = substr(nm, 1, length(nm) - 2)
      d = tms[tag "_F"] - tms[tag "_R"]; if (d < 0) d = -d
      printf "%s\t%.1f\t%s\n", tag, d, (d <= maxd ? "yes" : "no") > pairfile
    }
  }
}
"""


def awk_solution(formula: str, na: float, short: int, max_delta: float) -> str:
    return (
        f"awk -v formula={formula} -v na={na} -v short={short} -v maxd={max_delta} "
        f"-v tmfile=/app/tm_report.tsv -v pairfile=/app/pairs.tsv '{AWK_PROGRAM}' /app/primers.fasta\n"
        "cat /app/tm_report.tsv /app/pairs.tsv\n"
    )


def _python_solution(formula: str, na: float, short: int, max_delta: float) -> str:
    return textwrap.dedent(f'''\
        python3 - <<'PY'
        import math
        records, name = [], None
        for line in open("/app/primers.fasta"):
            line = line.strip()
            if line.startswith(">"):
                name = line[1:].split()[0]
                records.append([name, ""])
            elif line:
                records[-1][1] += "".join(c for c in line.upper() if c in "ACGT")

        def tm(seq):
            at, gc, n = seq.count("A") + seq.count("T"), seq.count("G") + seq.count("C"), len(seq)
            if n < {short}:
                return 2 * at + 4 * gc
            if "{formula}" == "basic":
                return 64.9 + 41 * (gc - 16.4) / n
            return 81.5 + 16.6 * math.log10({na}) + 0.41 * (100 * gc / n) - 675 / n

        temps = {{}}
        with open("/app/tm_report.tsv", "w") as out:
            out.write("name\\tlength\\tgc_percent\\ttm\\n")
            for name, seq in records:
                temps[name] = tm(seq)
                gc = 100 * (seq.count("G") + seq.count("C")) / len(seq)
                out.write(f"{{name}}\\t{{len(seq)}}\\t{{gc:.1f}}\\t{{temps[name]:.1f}}\\n")
        with open("/app/pairs.tsv", "w") as out:
            out.write("pair\\tdelta_tm\\tcompatible\\n")
            for name, _ in records:
                if name.endswith("_F"):
                    tag = name[:-2]
                    d = abs(temps[tag + "_F"] - temps[tag + "_R"])
                    out.write(f"{{tag}}\\t{{d:.1f}}\\t{{'yes' if d <= {max_delta} else 'no'}}\\n")
        PY
        cat /app/tm_report.tsv /app/pairs.tsv
        ''')


def _pytest_verifier(fasta_sha: str, rows: list[tuple], pairs: list[tuple]) -> str:
    return textwrap.dedent(f'''\
        import hashlib
        from pathlib import Path

        import pytest

        FASTA = Path("/app/primers.fasta")
        FASTA_SHA256 = "{fasta_sha}"
        # (name, length, gc_percent, tm) and (pair, delta_tm, compatible), from the shipped primers
        EXPECTED_TM = {rows!r}
        EXPECTED_PAIRS = {pairs!r}


        def table(path):
            p = Path(path)
            assert p.exists(), f"missing {{path}}"
            return [line.rstrip("\\r").split("\\t") for line in p.read_text().splitlines() if line.strip()]


        def test_input_unchanged():
            assert hashlib.sha256(FASTA.read_bytes()).hexdigest() == FASTA_SHA256


        def test_tm_report():
            rows = table("/app/tm_report.tsv")
            assert rows[0] == ["name", "length", "gc_percent", "tm"]
            assert len(rows) - 1 == len(EXPECTED_TM)
            for got, (name, length, gc, tm) in zip(rows[1:], EXPECTED_TM):
                assert got[0] == name and int(got[1]) == length, got
                assert float(got[2]) == pytest.approx(gc, abs=0.051), got
                assert float(got[3]) == pytest.approx(tm, abs=0.051), got


        def test_pairs():
            rows = table("/app/pairs.tsv")
            assert rows[0] == ["pair", "delta_tm", "compatible"]
            assert len(rows) - 1 == len(EXPECTED_PAIRS)
            for got, (tag, delta, ok) in zip(rows[1:], EXPECTED_PAIRS):
                assert got[0] == tag, got
                assert float(got[1]) == pytest.approx(delta, abs=0.051), got
                assert got[2] == ok, got
        ''')


def _shell_verifier(fasta_sha: str, expected_tm: str, expected_pairs: str) -> str:
    compare = r"""
compare() {  # compare(expected, got): same lines; text columns equal, numeric columns within 0.05
  awk -F'\t' '
    NR == FNR { want[FNR] = $0; n = FNR; next }
    { have[FNR] = $0; m = FNR }
    END {
      if (m != n) { print "expected " n " lines, got " m; exit 1 }
      for (i = 1; i <= n; i++) {
        if (i == 1) { if (have[1] != want[1]) { print "bad header: " have[1]; exit 1 }; continue }
        ne = split(want[i], e, "\t"); ng = split(have[i], g, "\t")
        if (ne != ng) { print "line " i ": wrong number of fields: " have[i]; exit 1 }
        for (k = 1; k <= ne; k++) {
          if (e[k] ~ /^-?[0-9]+\.[0-9]$/) {
            if (g[k] !~ /^-?[0-9]+(\.[0-9]+)?$/) { print "line " i ": not a number: " g[k]; exit 1 }
            d = g[k] - e[k]; if (d < 0) d = -d
            if (d > 0.051) { print "line " i ": " have[i] " (expected " want[i] ")"; exit 1 }
          } else if (g[k] != e[k]) { print "line " i ": " have[i] " (expected " want[i] ")"; exit 1 }
        }
      }
    }' "$1" "$2"
}
"""
    return (
        "#!/bin/bash\nexport PATH=/usr/bin:/bin LC_ALL=C\nmkdir -p /logs/verifier\n"
        + 'result() { echo "$1" > /logs/verifier/reward.txt; exit 0; }\n'
        + 'fail() { echo "FAIL: $*"; result 0; }\n'
        + compare
        + "work=$(mktemp -d)\n"
        + f'[ "$(sha256sum /app/primers.fasta | cut -d\' \' -f1)" = "{fasta_sha}" ] || fail "/app/primers.fasta was '
        f'modified"\n'
        + 'for f in tm_report.tsv pairs.tsv; do [ -f "/app/$f" ] || fail "missing /app/$f"; done\n'
        + f"cat > \"$work/tm.tsv\" <<'TSV'\n{expected_tm}TSV\n"
        + f"cat > \"$work/pairs.tsv\" <<'TSV'\n{expected_pairs}TSV\n"
        + "tr -d '\\r' < /app/tm_report.tsv | sed '/^[[:space:]]*$/d' > \"$work/got_tm.tsv\"\n"
        + "tr -d '\\r' < /app/pairs.tsv | sed '/^[[:space:]]*$/d' > \"$work/got_pairs.tsv\"\n"
        + 'compare "$work/tm.tsv" "$work/got_tm.tsv" || fail "tm_report.tsv"\n'
        + 'compare "$work/pairs.tsv" "$work/got_pairs.tsv" || fail "pairs.tsv"\n'
        + "echo PASS\nresult 1\n"
    )
