"""primer-tm above level 1: the program run on unseen FASTA files, the lab's protocol, pairs found by name.

Level 2 asks for a program (``python3 /app/tmcalc.py FASTA OUTDIR``) that the tests run on FASTA files the solver
never sees, with the corners the shipped file lacks (empty, CRLF, blank lines, a pair exactly at the tolerance, a
primer exactly at the short-primer threshold, unicode in the descriptions). Level 3 leaves the method, the salt
concentration (in millimolar), the threshold and the tolerance to the lab's protocol under ``/app/protocol/``.
Level 4 words the threshold the other way round (the longest Wallace primer), keeps a retired method in the
protocol's history, and pairs primers by name: the two primers of a pair may be anywhere in the file, in either
order, and a primer may have no partner at all.

:func:`report` is the specification the tests' expected values come from, written apart from the reference
program (the scripted solver's ``files/solver_program.py``), so the two check each other.
"""

from __future__ import annotations

import math
import random
import textwrap
from typing import Any

#: The program the task asks for at levels 2 and up, and the protocol's files at levels 3 and up.
PROGRAM = "/app/tmcalc.py"
CONF = "protocol/tm.conf"
METHODS = "protocol/METHODS.txt"


def tm(seq: str, formula: str, na: float, short_below: int) -> float:
    at = seq.count("A") + seq.count("T")
    gc = seq.count("G") + seq.count("C")
    n = len(seq)
    if n < short_below:
        return 2 * at + 4 * gc
    if formula == "basic":
        return 64.9 + 41 * (gc - 16.4) / n
    return 81.5 + 16.6 * math.log10(na) + 0.41 * (100 * gc / n) - 675 / n


def report(
    records: list[tuple[str, str]], formula: str, na: float, short_below: int, max_delta: float
) -> tuple[list[tuple[str, int, float, float]], list[tuple[str, float, str]]]:
    """The two tables for ``records`` (name, upper-case sequence) in file order: per primer (name, length,
    gc_percent, tm) rounded as the report writes them; per pair whose two primers are both present (tag, delta,
    compatible), in the order the pair's first primer appears."""
    rows, temps, order = [], {}, []
    for name, seq in records:
        temps[name] = tm(seq, formula, na, short_below)
        gc = 100 * (seq.count("G") + seq.count("C")) / len(seq)
        rows.append((name, len(seq), round(gc, 1), round(temps[name], 1)))
        tag = name[:-2]
        if name[-2:] in ("_F", "_R") and tag not in order:
            order.append(tag)
    pairs = []
    for tag in order:
        if f"{tag}_F" in temps and f"{tag}_R" in temps:
            delta = abs(temps[f"{tag}_F"] - temps[f"{tag}_R"])
            pairs.append((tag, round(delta, 1), "yes" if delta <= max_delta else "no"))
    return rows, pairs


def fasta(records: list[tuple[str, str]], rng: random.Random, *, crlf: bool = False, blank: bool = False) -> str:
    """``records`` as a FASTA text: wrapped at a random width, some lower case, descriptions after the name."""
    lines = []
    for name, seq in records:
        lines.append(f">{name} {rng.choice(['primer', 'oligo', 'rev. compl. checked', 'lot 7 ✓', 'Müller lab'])}")
        shown = seq.lower() if rng.random() < 0.3 else seq
        width = rng.choice([60, 12, 16, 7])
        lines += [shown[k : k + width] for k in range(0, len(shown), width)]
        if blank and rng.random() < 0.5:
            lines.append("")
    end = "\r\n" if crlf else "\n"
    return end.join(lines) + end if lines else ""


def _seq(rng: random.Random, at: int, gc: int) -> str:
    bases = [rng.choice("AT") for _ in range(at)] + [rng.choice("GC") for _ in range(gc)]
    rng.shuffle(bases)
    return "".join(bases)


def hidden_records(
    rng: random.Random, short_below: int, max_delta: float, by_name: bool
) -> dict[str, list[tuple[str, str]]]:
    """Small primer sets with the corners the shipped file lacks (their names are ``hidden_*.fasta``)."""
    gene = rng.choice(["HBB", "CFTR", "APOE", "LDLR"])
    d = int(max_delta)  # even at levels 2 and up: a Wallace Tm is even, so a pair can sit exactly on it
    tie_f = _seq(rng, 4, 4)  # Wallace Tm 24
    tie_r = _seq(rng, 4 + d // 2, 4 - d // 2)  # Tm 24 - d: exactly the tolerance apart (compatible)
    over_r = _seq(rng, 5 + d // 2, 3 - d // 2)  # Tm 22 - d: just over it
    at_threshold = _seq(rng, short_below // 2, short_below - short_below // 2)
    below = at_threshold[:-1]
    sets = {
        "hidden_empty.fasta": [],
        "hidden_tie.fasta": [(f"{gene}-01_F", tie_f), (f"{gene}-01_R", tie_r), (f"{gene}-02_F", tie_f)]
        + [(f"{gene}-02_R", over_r)],
        "hidden_threshold.fasta": [(f"{gene}-03_F", at_threshold), (f"{gene}-03_R", below)],
        "hidden_crlf.fasta": [
            (f"{gene}-{i:02d}_{end}", _seq(rng, rng.randint(4, 14), rng.randint(4, 14))) for i in (7, 8) for end in "FR"
        ],
    }
    if by_name:
        sets["hidden_unpaired.fasta"] = [
            (f"{gene}-05_R", _seq(rng, 10, 10)),
            (f"{gene}-04_F", _seq(rng, 9, 11)),
            (f"{gene}-06_F", _seq(rng, 11, 9)),
            (f"{gene}-05_F", _seq(rng, 8, 12)),
            (f"{gene}-04_R", _seq(rng, 12, 9)),
        ]
    return sets


def conf(rng: random.Random, formula: str, na: float, short_below: int, max_delta: float, *, level: int) -> str:
    """The lab's protocol settings, ``/app/protocol/tm.conf``: salt in millimolar; at level 4 the threshold as
    the longest Wallace primer and a retired method in the file's history."""
    lab = rng.choice(["Okafor", "Lindqvist", "Tanaka", "Ferreira"])
    threshold = (
        f"wallace_max_len = {short_below - 1}   # primers of at most this many bases: Wallace rule\n"
        if level >= 4
        else f"short_below = {short_below}   # primers shorter than this: Wallace rule\n"
    )
    history = (
        "# history:\n#   2019-2022  method = basic, sodium_mM = 200 (retired with the old PCR buffer)\n"
        "#   2023-      as below\n"
        if level >= 4
        else ""
    )
    return (
        f"# Tm protocol of the {lab} lab: the melting temperatures every primer report uses.\n"
        "# Read by the lab's tools; see METHODS.txt for what each method computes.\n"
        + history
        + f"method = {formula}   # basic | salt\n"
        + f"sodium_mM = {na * 1000:g}   # monovalent cation concentration of the PCR buffer, millimolar\n"
        + threshold
        + f"max_delta_c = {max_delta:g}   # a pair is compatible when its Tm difference is at most this (deg C)\n"
    )


def methods(level: int) -> str:
    """``/app/protocol/METHODS.txt``: what each method computes (and, at level 4, one the report does not use).

    Which primers are short is said with tm.conf's own key and words (fewer than ``short_below`` bases; at level 4
    at most ``wallace_max_len`` bases), so the two files cannot be read two ways at the boundary."""
    short = (
        "short primers: at most tm.conf's wallace_max_len bases"
        if level >= 4
        else "short primers: fewer than tm.conf's short_below bases"
    )
    text = textwrap.dedent(f"""\
        Melting temperature methods
        ===========================

        N is the primer's length, A, C, G, T its base counts (upper and lower case alike).

        Wallace rule ({short})
            Tm = 2 * (A + T) + 4 * (G + C)

        basic (longer primers)
            Tm = 64.9 + 41 * (G + C - 16.4) / N

        salt (longer primers; salt-adjusted)
            Tm = 81.5 + 16.6 * log10([Na+]) + 0.41 * GC% - 675 / N
            [Na+] is the monovalent cation concentration in mol/L, log10 the base-10 logarithm,
            GC% = 100 * (G + C) / N.
        """)
    if level >= 4:
        text += textwrap.dedent("""
            nearest-neighbour (SantaLucia 1998)
                The ordering portal's estimate, from dinucleotide stacking enthalpies and entropies. Shown on
                the order forms for information; the lab's reports do not use it.
            """)
    return text


def instruction(rung: int, told: str, n: int) -> str:
    """The instruction above level 1: ``told`` is level 1's paragraph of rules (levels 2), or the protocol's
    pointer (levels 3 and up)."""
    pairs = (
        "A pair is the two primers `<TAG>_F` and `<TAG>_R`; they may stand anywhere in the file, in either order, "
        "and a primer may have no partner (it has a report line but no pair)."
        if rung >= 4
        else "The primers come as forward/reverse pairs named `<TAG>_F` and `<TAG>_R`."
    )
    order = "in the order the pair's first primer appears in the file" if rung >= 4 else "in file order"
    return (
        textwrap.dedent(f"""\
        # Primer melting temperatures

        `/app/primers.fasta` holds {n} PCR primers in FASTA format. {pairs} A record starts
        with a `>` header line (the primer name is the first word after `>`); its sequence may be split over
        several lines and may be in lower case.

        """)
        + told
        + textwrap.dedent(f"""
        Write `/app/tm_report.tsv` (tab-separated): the header `name<TAB>length<TAB>gc_percent<TAB>tm`, then one
        line per primer in file order, `gc_percent` (`100 * (G + C) / N`) and `tm` both rounded to 1 decimal place.

        Then write `/app/pairs.tsv`: the header `pair<TAB>delta_tm<TAB>compatible`, then one line per pair
        ({order}) with the pair's `<TAG>`, the absolute difference of the two (unrounded) melting temperatures
        rounded to 1 decimal, and `yes` if that difference is at most the tolerance, else `no`.

        ## The program

        Write `{PROGRAM}` too: `python3 {PROGRAM} FASTA OUTDIR` must write `OUTDIR/tm_report.tsv` and
        `OUTDIR/pairs.tsv` as above for any FASTA file of primers, and the tests run it on other files than the
        shipped one. A file may be empty (then both files hold just their header), its lines may end with
        `\\r\\n` (the `\\r` is part of the line end), blank lines may stand between records and the descriptions
        after a name may hold any UTF-8 text.

        Values are checked to within 0.05. Do not modify `/app/primers.fasta`.
        """)
    )


def protocol_told() -> str:
    return textwrap.dedent("""\
        Compute every primer's `tm` (melting temperature, °C) and judge every pair exactly as the lab's Tm
        protocol says: its settings and the methods they name are under `/app/protocol/` (the same protocol
        applies to every file the program is given).
        """)


def tests(hidden: dict[str, tuple[list, list]]) -> str:
    """The tests of levels 2 and up, appended to the pytest verifier: the program on every hidden FASTA file."""
    import json

    return textwrap.dedent(f"""\


        # -- the program, on FASTA files the solver never saw ---------------------------------------
        import json

        from agentcall import agent_folder, read_agent_file, run_agent  # the agent's program runs as nobody

        HIDDEN = json.loads({json.dumps(hidden, sort_keys=True)!r})


        def check_tm(rows, want):
            assert rows and rows[0] == ["name", "length", "gc_percent", "tm"], rows[:1]
            assert len(rows) - 1 == len(want), f"{{len(rows) - 1}} primers, expected {{len(want)}}"
            for got, (name, length, gc, tm) in zip(rows[1:], want):
                assert len(got) == 4 and got[0] == name and int(got[1]) == length, got
                assert float(got[2]) == pytest.approx(gc, abs=0.051), got
                assert float(got[3]) == pytest.approx(tm, abs=0.051), got


        def check_pairs(rows, want):
            assert rows and rows[0] == ["pair", "delta_tm", "compatible"], rows[:1]
            assert [r[0] for r in rows[1:]] == [tag for tag, _, _ in want], "pairs and their order"
            for got, (tag, delta, ok) in zip(rows[1:], want):
                assert len(got) == 3 and float(got[1]) == pytest.approx(delta, abs=0.051), got
                assert got[2] == ok, got


        def rows_of(text):
            return [line.rstrip("\\r").split("\\t") for line in text.splitlines() if line.strip()]


        @pytest.mark.parametrize("name", sorted(HIDDEN))
        def test_program_on_unseen_fasta(name):
            data = Path(__file__).with_name(name).read_bytes()
            work = agent_folder({{"in.fasta": data}}, writable=True)
            out = run_agent(["python3", "{PROGRAM}", str(work / "in.fasta"), str(work)], cwd="/app", text=True,
                            timeout=60)
            assert out.returncode == 0, out.stderr[-2000:]
            want_tm, want_pairs = HIDDEN[name]
            check_tm(rows_of(read_agent_file(work / "tm_report.tsv")), want_tm)
            check_pairs(rows_of(read_agent_file(work / "pairs.tsv")), want_pairs)
        """)


def program_params(rung: int, formula: str, na: float, short_below: int, max_delta: float) -> dict[str, Any]:
    """What the scripted solver's program is given: the rules when the instruction tells them, else the
    protocol's path."""
    if rung >= 3:
        return {"protocol": "/app/" + CONF}
    return {"formula": formula, "na": na, "short": short_below, "max_delta": max_delta}
