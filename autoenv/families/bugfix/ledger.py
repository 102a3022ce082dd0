"""bugfix level 5's codebase: a small expense-report package whose docstrings are the contract (data, not code
this package runs; :mod:`autoenv.families.bugfix.level5` assembles a task from it).

Each function has one docstring, its correct body and two buggy bodies, each a bug a person really writes and
each passing the package's own unit tests and the shipped sample: floats for money, ``lower`` for ``casefold``,
the first ten characters of a time stamp for its UTC day, floor division on negative cents, ties left in
insertion order, a CSV file opened without ``newline=""`` or the byte-order mark. A task breaks every function
(one of its two bugs, drawn), so every clause of every docstring is needed; the hidden tests call each function
on unseen inputs that hold its corners and run the report on unseen exports.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

#: Where the package's name goes in its sources (``python3 -m __PKG__.report``).
PKG = "__PKG__"
PACKAGE_NAMES = ["ledger", "spendlog", "tally", "expenses"]


@dataclass(frozen=True)
class Function:
    """One function of the package: its ``def`` line and docstring, its correct body and its buggy bodies."""

    name: str
    head: str
    correct: str
    bugs: tuple[tuple[str, str], ...]  # (body, what is wrong)

    def source(self, body: str) -> str:
        return self.head + textwrap.indent(body, "    ")


@dataclass(frozen=True)
class Module:
    name: str
    header: str
    functions: tuple[Function, ...]


MONEY = Module(
    "money",
    '''"""Money amounts: the text of an export's cell <-> integer cents (never floats: sums must be exact)."""

import re  # noqa: F401
from decimal import ROUND_HALF_EVEN, Decimal  # noqa: F401

#: Cell spellings that mean "no amount", compared after stripping surrounding white space, ignoring case.
MISSING = ("", "-", "n/a", "na", "null", "none")

AMOUNT = re.compile(r"([+-]?)\\$?([0-9][0-9,]*(?:\\.[0-9]+)?)")
''',
    (
        Function(
            "parse_amount",
            '''def parse_amount(text):
    """The amount the cell ``text`` holds, in integer cents, or None when the cell is missing.

    - Surrounding white space is ignored; a cell that is then one of MISSING (in any case) is missing: None.
    - An optional sign (``-`` or ``+``) comes first, then an optional ``$``, then the digits.
    - An amount in parentheses, ``(12.50)``, is negative (accounting notation).
    - Commas are thousands separators and are ignored: ``1,204.5`` is 120450 cents.
    - More than two decimal places are rounded to the cent, half to even: ``0.125`` is 12, ``0.135`` is 14.
    - Anything else (letters, a second point, two signs such as ``--5`` or ``(-5)``) raises ValueError.
    """
''',
            """t = text.strip()
if t.lower() in MISSING:
    return None
negative = t.startswith("(") and t.endswith(")")
if negative:
    t = t[1:-1].strip()
m = AMOUNT.fullmatch(t)
if m is None or (negative and m.group(1)):
    raise ValueError(f"not an amount: {text!r}")
cents = int((Decimal(m.group(2).replace(",", "")) * 100).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
return -cents if negative or m.group(1) == "-" else cents
""",
            (
                (
                    """t = text.strip()
if t in ("", "-"):
    return None
return round(float(t.replace(",", "").replace("$", "")) * 100)
""",
                    "floats, no parentheses, only two missing spellings",
                ),
                (
                    """t = text.strip().replace(",", "").replace("$", "")
if not t:
    return None
if t.startswith("("):
    return -int(float(t[1:-1]) * 100)
return int(float(t) * 100)
""",
                    "floats truncated to the cent, only the empty cell missing",
                ),
            ),
        ),
        Function(
            "format_cents",
            '''def format_cents(cents):
    """``cents`` as text: a minus sign for a negative amount, the whole units, a point and exactly two digits, no
    thousands separators (-5 -> ``-0.05``, 123456 -> ``1234.56``, 0 -> ``0.00``); exact for integers of any size."""
''',
            """sign = "-" if cents < 0 else ""
whole, part = divmod(abs(cents), 100)
return f"{sign}{whole}.{part:02d}"
""",
            (
                ('return f"{cents // 100}.{cents % 100:02d}"\n', "floor division of negative cents"),
                ('return f"{cents / 100:.2f}"\n', "a float: large amounts lose their cents"),
            ),
        ),
    ),
)

TEXT = Module(
    "text",
    '''"""Payee names: the key that two spellings of one payee share."""

import unicodedata  # noqa: F401
''',
    (
        Function(
            "normalize_key",
            '''def normalize_key(name):
    """The key of the payee ``name``: its Unicode NFKC form, case-folded (``str.casefold``, so ``Straße`` and
    ``STRASSE`` are one payee), every run of white space (spaces, tabs, no-break spaces) made one space, and none
    at either end."""
''',
            'return " ".join(unicodedata.normalize("NFKC", name).casefold().split())\n',
            (
                ('return " ".join(name.split()).lower()\n', "lower() for casefold(), no NFKC"),
                ("return name.strip().casefold()\n", "no NFKC, inner white space kept"),
            ),
        ),
    ),
)

CSVIO = Module(
    "csvio",
    '''"""Reading an export: a CSV file with a header line."""

import csv  # noqa: F401
''',
    (
        Function(
            "read_rows",
            '''def read_rows(path):
    """The rows of the CSV export at ``path``, as dicts from the header's names to the row's cells.

    The file is UTF-8 and may start with a byte-order mark, which is not part of the first name. Lines end with
    ``\\n`` or ``\\r\\n``; a quoted field may hold commas, doubled quotes and line breaks, kept as they are. Header
    names are stripped of surrounding white space; cells are kept exactly. A row without a single non-blank cell
    (an empty line, ``,,,``) is skipped.
    """
''',
            """with open(path, newline="", encoding="utf-8-sig") as fh:
    reader = csv.reader(fh)
    header = [name.strip() for name in next(reader, [])]
    return [dict(zip(header, row)) for row in reader if any(cell.strip() for cell in row)]
""",
            (
                (
                    """with open(path, encoding="utf-8") as fh:
    reader = csv.DictReader(fh)
    return [row for row in reader if row]
""",
                    "the byte-order mark stays in the first name, line breaks in fields translated, names unstripped",
                ),
                (
                    """rows = []
with open(path, encoding="utf-8-sig") as fh:
    header = [name.strip() for name in fh.readline().rstrip("\\r\\n").split(",")]
    for line in fh:
        if line.strip():
            rows.append(dict(zip(header, line.rstrip("\\r\\n").split(","))))
return rows
""",
                    "splits lines on commas: quoted fields break",
                ),
            ),
        ),
    ),
)

CLOCK = Module(
    "clock",
    '''"""Time stamps of an export."""

from datetime import datetime, timezone  # noqa: F401
''',
    (
        Function(
            "utc_day",
            '''def utc_day(stamp):
    """The UTC calendar day (``YYYY-MM-DD``) of the ISO 8601 time ``stamp`` (``T`` or a space between date and time,
    seconds possibly with a fraction). A stamp with an offset (``+05:30``, ``-08:00``, ``Z``) is converted to UTC
    first, so ``2024-03-01T22:30:00-08:00`` is on 2024-03-02; a stamp without one is in UTC already. Surrounding
    white space is ignored."""
''',
            """moment = datetime.fromisoformat(stamp.strip())
if moment.tzinfo is not None:
    moment = moment.astimezone(timezone.utc)
return moment.date().isoformat()
""",
            (
                ("return stamp.strip()[:10]\n", "the local day: the offset is ignored"),
                (
                    "return datetime.fromisoformat(stamp.strip()).date().isoformat()\n",
                    "the local day: the offset is parsed and then ignored",
                ),
            ),
        ),
    ),
)

RANK = Module(
    "rank",
    '''"""Ranking payees by their totals."""
''',
    (
        Function(
            "top",
            '''def top(totals, k):
    """The ``k`` largest entries of ``totals`` (key -> cents) as ``(key, cents)`` pairs, largest first; equal
    totals in ascending order of their keys (plain string order); every entry when there are fewer than ``k``;
    none for ``k <= 0``."""
''',
            "return sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[: max(k, 0)]\n",
            (
                (
                    "return sorted(totals.items(), key=lambda kv: kv[1], reverse=True)[:k]\n",
                    "ties in insertion order, a negative k counts from the end",
                ),
                (
                    "return sorted(totals.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:k]\n",
                    "ties in descending key order, a negative k counts from the end",
                ),
            ),
        ),
    ),
)

MODULES = (MONEY, TEXT, CSVIO, CLOCK, RANK)
FUNCTIONS = {f.name: (m.name, f) for m in MODULES for f in m.functions}

REPORT = '''"""``python3 -m __PKG__.report FILE [--top K]`` (run from /app): the summary of an expense export.

FILE is read with ``csvio.read_rows``; its columns are ``when`` (a time stamp, ``clock.utc_day``), ``payee``
(``text.normalize_key``) and ``amount`` (``money.parse_amount``); a row whose amount is missing is left out.
It prints, every sum written by ``money.format_cents``:

    rows N              the number of rows counted
    total SUM           their sum
    day YYYY-MM-DD SUM  the sum of each UTC day, one line per day, in date order
    top KEY<TAB>SUM     the K payees (default 3) with the largest sums, by ``rank.top``
"""

import sys

from __PKG__.clock import utc_day
from __PKG__.csvio import read_rows
from __PKG__.money import format_cents, parse_amount
from __PKG__.rank import top
from __PKG__.text import normalize_key


def main(argv):
    path, k = argv[0], 3
    if argv[1:2] == ["--top"]:
        k = int(argv[2])
    days, payees, count, total = {}, {}, 0, 0
    for row in read_rows(path):
        cents = parse_amount(row["amount"])
        if cents is None:
            continue
        count += 1
        total += cents
        day = utc_day(row["when"])
        days[day] = days.get(day, 0) + cents
        key = normalize_key(row["payee"])
        payees[key] = payees.get(key, 0) + cents
    print(f"rows {count}")
    print(f"total {format_cents(total)}")
    for day in sorted(days):
        print(f"day {day} {format_cents(days[day])}")
    for key, cents in top(payees, k):
        print(f"top {key}\\t{format_cents(cents)}")


if __name__ == "__main__":
    main(sys.argv[1:])
'''

UNIT_TESTS = '''"""The package's unit tests (``cd /app && python3 -m unittest discover -s tests``)."""

import unittest

from __PKG__.clock import utc_day
from __PKG__.money import format_cents, parse_amount
from __PKG__.rank import top
from __PKG__.text import normalize_key


class MoneyTests(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(parse_amount("12.50"), 1250)
        self.assertEqual(parse_amount(" 7.00 "), 700)
        self.assertIsNone(parse_amount(""))

    def test_format(self):
        self.assertEqual(format_cents(1250), "12.50")
        self.assertEqual(format_cents(0), "0.00")


class TextTests(unittest.TestCase):
    def test_key(self):
        self.assertEqual(normalize_key("  Acme Corp "), "acme corp")


class ClockTests(unittest.TestCase):
    def test_day(self):
        self.assertEqual(utc_day("2024-03-01T12:00:00Z"), "2024-03-01")


class RankTests(unittest.TestCase):
    def test_top(self):
        self.assertEqual(top({"a": 5, "b": 9, "c": 1}, 2), [("b", 9), ("a", 5)])


if __name__ == "__main__":
    unittest.main()
'''


def module_source(module: Module, bugs: dict[str, int] | None, package: str) -> str:
    """``module``'s text: each function with its correct body, or (``bugs``: name -> index) a buggy one."""
    parts = []
    for f in module.functions:
        index = (bugs or {}).get(f.name)
        parts.append(f.source(f.correct if index is None else f.bugs[index][0]))
    return (module.header + "\n\n" + "\n\n".join(parts)).replace(PKG, package)


def reference_bodies() -> dict[str, str]:
    """Each function's correct body (the scripted solver's bug-hunt recipe knows them, as for levels 2-4)."""
    return {f.name: f.correct for m in MODULES for f in m.functions}
