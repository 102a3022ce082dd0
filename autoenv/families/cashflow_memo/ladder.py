"""cashflow-memo above level 1: the finance team's notes, a memo program run on unseen workbooks, more memo lines.

Level 2 tells neither the model, the Scenarios sheet's layout, the decision rule nor what the memo says: the finance
team's notes (``/app/finance-notes.md``) do, and the tests are level 1's. Level 3 asks for a program,
``/app/make_memo.py BOOK MEMO``, that the tests run on workbooks the solver never sees, whose memo lines must follow
the notes' conventions exactly, with the corners they word and the shipped workbook lacks: a lowest cash below
zero (written in parentheses), a half euro (rounded away from zero: Python's ``round`` and ``format`` round halves
to even), a lowest cash exactly at the covenant (which is "at least" it: PROCEED), the lowest cash reached in two
months running (a month with no net cash flow: the first month counts). Level 4 adds two memo lines, each needed:
the scenarios ranked by lowest cash (ties in the Inputs sheet's order: a workbook whose Upside equals its Base) and
the headroom over the covenant (negative in parentheses).

The unseen workbooks use figures exact in binary floating point (multipliers and shares like 0.75 and 0.375, whole
revenues), so every month-end cash is exact however a program orders its arithmetic, and a half euro is a half.
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from types import ModuleType
from typing import Any

from autoenv.families.base import function_from
from autoenv.families.office import common

#: A phrase each level's instruction adds (levels 2, 3, 4), in the order of the levels: how the scripted
#: solver's recipe reads the level a task is at.
LEVEL_PHRASES = (
    "The team's notes, `/app/finance-notes.md`",
    "`python3 /app/make_memo.py BOOK MEMO`",
    "memo section was extended this month",
)

PROGRAM = "/app/make_memo.py"
NOTES = "finance-notes.md"


#: Month-end cash per scenario (the model the notes word), in the Inputs sheet's scenario order: the tests' own
#: ``model`` (files/cashflow_tests.py), so the memo lines expected are the figures the tests' model computes.
series = function_from(Path(__file__).with_name("files") / "cashflow_tests.py", "model")


def money(x: float) -> str:
    """An amount as the notes write it: whole euros, halves away from zero, thousands commas, negative in ()."""
    n = math.floor(abs(x) + 0.5)
    return f"({n:,})" if x < 0 and n else f"{n:,}"


def memo_lines(inputs: dict[str, Any], rule: list[str], level: int, months: list[str]) -> list[str]:
    """The paragraphs the notes require of a memo on ``inputs`` (without a trailing full stop; ``months``: the
    month names the Inputs sheet writes)."""
    cash = series(inputs)
    lows = {name: min(months) for name, months in cash.items()}
    proceed = all(lows[name] >= inputs["covenant"] for name in rule)
    lines = [f"Recommendation: {'PROCEED' if proceed else 'DEFER'}"]
    for name, by_month in cash.items():
        lines.append(f"{name}: lowest month-end cash {money(lows[name])} in {months[by_month.index(lows[name])]}")
    if level >= 4:
        order = sorted(cash, key=lambda name: (lows[name], list(cash).index(name)))
        lines.append("Ranking: " + ", ".join(order))
        lines.append("Headroom: " + money(min(lows[name] - inputs["covenant"] for name in rule)))
    return lines


def near_a_half(inputs: dict[str, Any]) -> bool:
    """Whether a lowest cash of ``inputs`` (figures not exact in binary: the shipped workbook's) lies within a
    cent of a half euro, where the order of a program's arithmetic could decide its rounding: the shipped workbook
    is redrawn then, so it shows no rounding corner and its memo's amounts are unambiguous."""
    return any(abs(low - math.floor(low) - 0.5) < 0.01 for low in map(min, series(inputs).values()))


def _exact(rng: random.Random, keep: float, revenue_step: int) -> dict[str, Any]:
    """Inputs whose every month-end cash is exact in binary floating point (variable share 1 - ``keep``)."""
    fixed = rng.randrange(60, 120) * 1000
    level = int(fixed / keep)
    return {
        "opening": rng.randrange(150, 400) * 1000 + rng.randrange(0, 1000),
        "covenant": rng.randrange(40, 120) * 1000,
        "variable": 1 - keep,
        "fixed": fixed,
        "investment": rng.randrange(100, 350) * 1000,
        "invest_month": rng.randrange(2, 11),
        "multipliers": {"Base": 1.0, "Downside": rng.choice([0.75, 0.875]), "Upside": rng.choice([1.125, 1.25])},
        "revenue": [
            (level + rng.randrange(-3000, 25000)) // revenue_step * revenue_step + rng.randrange(revenue_step)
            for _ in range(12)
        ],
    }


def _half_even(x: float) -> bool:
    """A half euro on an even whole part: where rounding half to even and half away from zero disagree."""
    return x - math.floor(x) == 0.5 and int(abs(x)) % 2 == 0


def unseen(rng: random.Random, kind: str) -> dict[str, Any]:
    """Inputs of an unseen workbook with the corners of ``kind``:

    ``negative``: the Downside's lowest cash below zero and a half euro (DEFER, parentheses, rounding);
    ``covenant``: the Downside's lowest cash exactly at the covenant (PROCEED), the Base's reached in two months
    running (a month whose revenue just covers the fixed costs), the Upside equal to the Base and listed before it
    (a tie, ranked in the Inputs order);
    ``half``: the Base's lowest cash a half euro, above zero."""
    for _ in range(50000):
        if kind == "negative":
            inputs = _exact(rng, 0.5, 1)
            inputs["investment"] = inputs["opening"] + rng.randrange(50, 250) * 1000
            lows = {name: min(m) for name, m in series(inputs).items()}
            if lows["Downside"] < 0 and _half_even(lows["Downside"]):
                return inputs
        elif kind == "covenant":
            inputs = _exact(rng, 0.5, 8)  # revenues in eighths: the Downside's 0.75 x 0.5 stays whole
            k = inputs["invest_month"]
            inputs["revenue"][k] = 2 * inputs["fixed"]  # the month after the investment: no net cash for Base
            # the Upside equal to the Base and listed first: a tie ranked in the Inputs order, not by name
            inputs["multipliers"] = {"Upside": 1.0, "Base": 1.0, "Downside": inputs["multipliers"]["Downside"]}
            cash = series(inputs)
            base = cash["Base"]
            if min(base) == base[k - 1] == base[k] and base.index(min(base)) == k - 1 and min(cash["Downside"]) > 0:
                inputs["covenant"] = min(cash["Downside"])
                if inputs["covenant"] == int(inputs["covenant"]):
                    inputs["covenant"] = int(inputs["covenant"])
                    return inputs
        else:
            inputs = _exact(rng, 0.5, 1)
            lows = {name: min(m) for name, m in series(inputs).items()}
            if min(lows.values()) > 0 and _half_even(lows["Base"]):
                return inputs
    raise RuntimeError(f"could not draw an unseen workbook of kind {kind}")  # pragma: no cover


def notes(level: int, rule: list[str]) -> str:
    """The finance team's notes (``/app/finance-notes.md``): the model, the sheet, the rule and the memo."""
    first, second = rule
    end = ";" if level >= 4 else "."  # the memo list's last item ends it
    text = f"""\
# Finance team notes: cash-flow scenarios and investment memos

## The model

Month-end cash of a scenario is computed month by month: start from the
opening cash; each month add the month's baseline revenue times the
scenario's revenue multiplier times (1 - variable cost share), subtract the
fixed costs, and in the investment month also subtract the investment
outflow. Scenarios are those the Inputs sheet lists under `Scenario`, in
that order.

## The Scenarios sheet

A sheet named `Scenarios` next to the Inputs sheet (which stays unchanged):
row 1 reads `Month` and the scenario names in A1:D1; A2:A13 hold the month
numbers 1 to 12; B2:D13 each scenario's month-end cash; row 14 has `Lowest`
in A14 and each scenario's lowest month-end cash in B14:D14. Cells B2:D14
are formulas that reference the Inputs sheet, so the model stays right when
any input (the investment month included) changes.

## The decision rule

PROCEED only if the lowest month-end cash of both the {first} and the
{second} scenario is at least the covenant minimum (equal to it is enough);
otherwise DEFER.

## The memo

A Word document. Each of these is a paragraph of its own, written exactly
so (a full stop at the end is optional):

- `Recommendation: PROCEED` or `Recommendation: DEFER`, and no other
  paragraph starting `Recommendation:`;
- for each scenario, in the Inputs sheet's order,
  `<scenario>: lowest month-end cash <amount> in <month>`, where `<month>`
  is the month's name as the Inputs sheet writes it; when the lowest cash
  is reached in more than one month, the first of them{end}
"""
    if level >= 4:
        text += """\
- (added this month) `Ranking: <scenario>, <scenario>, <scenario>`: the
  scenarios from the lowest lowest-cash to the highest; scenarios with equal
  lowest cash in the Inputs sheet's order;
- (added this month) `Headroom: <amount>`: the smallest, over the scenarios
  the decision rule looks at, of the lowest month-end cash minus the covenant
  minimum.
"""
    text += """\

Other paragraphs (a heading, a word of context) are welcome.

Amounts are whole euros with a comma between thousands (`84,250`), rounded to
the nearest euro with halves away from zero (84,250.5 is `84,251`); a
negative amount is written in parentheses without a minus sign (-1,250.5 is
`(1,251)`).
"""
    return text


INSTRUCTION = """\
# Cash-flow scenarios and an investment memo

The finance team must decide whether to go ahead with {project} this year.
`/app/cashflow.xlsx` has an **Inputs** sheet with the model's inputs. The
team's notes, `/app/{notes}`, say how month-end cash is computed, what the
Scenarios sheet looks like, the decision rule and how an investment memo is
written.

Produce two deliverables, each as the notes describe it:

1. **Workbook.** The `Scenarios` sheet in `/app/cashflow.xlsx`. The checker
   recomputes its formulas itself (it ignores cached values) and understands
   cell references with or without `$` and a sheet name (`Inputs!$B$3`),
   ranges, arithmetic, comparisons and the functions SUM, MIN, MAX, AVERAGE,
   ABS, ROUND, IF, AND, OR, NOT, COUNTIF and SUMIF.

2. **Memo.** {memo}

openpyxl and python-docx are installed.
"""

MEMO_IN_PLACE = "`/app/memo.docx`, the memo to the finance director."

MEMO_PROGRAM = (
    "`/app/memo.docx`, the memo to the finance director, written by a program the team will run every "
    "month: `python3 {program} BOOK MEMO` reads a workbook `BOOK` (its Inputs sheet laid out like this one's) "
    "and writes the memo `MEMO` (a new .docx). The checker runs it on `/app/cashflow.xlsx` and on other "
    "workbooks, with figures of every kind the notes provide for."
)

#: Level 4's sentence more (the scripted solver's recipe knows the level by it).
REVISED = " The notes' memo section was extended this month: follow it as it is now."


def instruction(level: int, project: str) -> str:
    memo = MEMO_PROGRAM.format(program=PROGRAM) if level >= 3 else MEMO_IN_PLACE
    memo += REVISED if level >= 4 else ""
    return common.reflow(INSTRUCTION.format(project=project, notes=NOTES, memo=memo))


def write_unseen(path: Path, inputs: dict[str, Any], rng: random.Random, g: ModuleType) -> None:
    """An unseen workbook: ``inputs`` on an Inputs sheet laid out like the shipped one's (its rows shuffled) by
    the family's generator module ``g``."""
    order = list(g.LABELS)
    rng.shuffle(order)
    g.write_inputs(path, inputs, order)


#: The tests of levels 3 and 4, appended to level 1's: the memo program on the shipped and the unseen workbooks.
TESTS = '''

# -- levels 3 and 4: the memo program, on workbooks the solver never saw ------------------------
import base64
import io

from agentcall import agent_folder, run_agent

PROGRAM = "/app/make_memo.py"
READ = "import base64, sys; sys.stdout.write(base64.b64encode(open(sys.argv[1], 'rb').read()).decode())"


def memo_of(name):
    """The paragraphs of the memo the agent's program writes for the workbook ``name`` (a file next to this one)."""
    work = agent_folder({"in.xlsx": Path(__file__).with_name(name)}, writable=True)
    # one process start: the program (its own output to stderr), then its MEMO read back as nobody
    script = f'python3 {PROGRAM} "$1" "$2" >&2 && python3 -I -c "$3" "$2"'
    argv = ["sh", "-c", script, "sh", str(work / "in.xlsx"), str(work / "memo.docx"), READ]
    done = run_agent(argv, cwd="/app", text=True, timeout=60)
    assert done.returncode == 0, (
        f"{PROGRAM} failed on a workbook or wrote no memo (exit {done.returncode}): {done.stderr[-1500:]}"
    )
    try:
        document = docx.Document(io.BytesIO(base64.b64decode(done.stdout)))
    except Exception as exc:
        pytest.fail(f"{PROGRAM} wrote a memo that is not a readable .docx: {exc}")
    return [" ".join(p.text.split()).removesuffix(".") for p in document.paragraphs]


@pytest.mark.parametrize("name", sorted(CASE["memos"]))
def test_memo_program_on_a_workbook(name):
    paragraphs = memo_of(name)
    starts = [p for p in paragraphs if p.startswith("Recommendation:")]
    assert len(starts) == 1, f"{name}: the memo needs exactly one paragraph starting 'Recommendation:' (found {starts})"
    for line in CASE["memos"][name]:
        assert line in paragraphs, f"{name}: the memo lacks the paragraph {line!r}; its paragraphs: {paragraphs}"
'''
