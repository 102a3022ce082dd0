"""A small spreadsheet formula evaluator (standard library only).

Spreadsheet tasks check the *formulas* a solver wrote, not just cached
values: openpyxl saves formulas without computing them, and the task image has
no spreadsheet application. This module evaluates the subset of Excel formula
syntax those tasks allow, and is copied verbatim into each task's ``tests/``
(tests import it as ``formula_eval``).

Supported: numbers (``12``, ``1.5``, ``1e3``, ``10%``), strings (``"OK"``),
``TRUE``/``FALSE``, cell references with optional ``$`` and sheet
(``D2``, ``$D$2``, ``Inputs!B3``, ``'My sheet'!B3``), ranges (``D2:D9``),
operators ``+ - * / ^ & = <> < <= > >=`` with Excel's precedence (unary minus
binds tighter than ``^``), and the functions ``SUM MIN MAX AVERAGE ABS ROUND
IF AND OR NOT COUNTIF SUMIF``. Empty cells are 0 in arithmetic and skipped by
the aggregate functions, as in Excel. Anything else raises
:class:`FormulaError` naming what is not supported, so a verifier can say why
it rejected a formula instead of guessing.

``tests/office/test_libreoffice_recalc.py`` (in autoenv) checks that this
evaluator and LibreOffice compute the same values on the tasks' reference
workbooks.
"""

from __future__ import annotations

import math
import re

SUPPORTED_FUNCTIONS = ("SUM", "MIN", "MAX", "AVERAGE", "ABS", "ROUND", "IF", "AND", "OR", "NOT", "COUNTIF", "SUMIF")


class FormulaError(Exception):
    """A formula the evaluator cannot (or will not) compute."""


_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<string>"(?:[^"]|"")*")
  | (?P<ref>(?:(?:'(?:[^']|'')+'|[A-Za-z_][A-Za-z0-9_.]*)!)?\$?[A-Za-z]{1,3}\$?[0-9]+(?::\$?[A-Za-z]{1,3}\$?[0-9]+)?)(?![A-Za-z0-9_(])
  | (?P<number>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
  | (?P<func>[A-Za-z_][A-Za-z0-9_.]*)\s*\(
  | (?P<bool>TRUE|FALSE)(?![A-Za-z0-9_(])
  | (?P<op><=|>=|<>|[-+*/^&=<>%(),])
    """,
    re.VERBOSE | re.IGNORECASE,
)
_CELL = re.compile(r"\$?([A-Za-z]{1,3})\$?([0-9]+)")


def column_index(letters: str) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + (ord(ch) - 64)
    return n


def column_letters(index: int) -> str:
    out = ""
    while index:
        index, rem = divmod(index - 1, 26)
        out = chr(65 + rem) + out
    return out


def _split_sheet(text: str) -> tuple[str | None, str]:
    if "!" not in text:
        return None, text
    sheet, _, rest = text.rpartition("!")
    if sheet.startswith("'") and sheet.endswith("'"):
        sheet = sheet[1:-1].replace("''", "'")
    return sheet, rest


def normalize_ref(coord: str) -> str:
    """``$D$2`` -> ``D2``."""
    m = _CELL.fullmatch(coord.strip())
    if not m:
        raise FormulaError(f"not a cell reference: {coord!r}")
    return f"{m.group(1).upper()}{int(m.group(2))}"


def tokenize(formula: str) -> list[tuple[str, str]]:
    text = formula[1:] if formula.startswith("=") else formula
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise FormulaError(f"cannot read formula {formula!r} at {text[pos:pos + 12]!r}")
        pos = m.end()
        kind = m.lastgroup
        if kind == "ws":
            continue
        tokens.append((kind, m.group("func") if kind == "func" else m.group(kind)))
    return tokens


class _Range:
    def __init__(self, sheet: str, start: str, end: str):
        self.sheet = sheet
        a, b = _CELL.fullmatch(start), _CELL.fullmatch(end)
        c1, c2 = sorted((column_index(a.group(1)), column_index(b.group(1))))
        r1, r2 = sorted((int(a.group(2)), int(b.group(2))))
        self.coords = [f"{column_letters(c)}{r}" for r in range(r1, r2 + 1) for c in range(c1, c2 + 1)]


class Evaluator:
    """Evaluate formulas over ``cells``: {(sheet, "A1"): value or "=formula"}.

    ``overrides`` replaces cell contents (values or formulas) without touching
    ``cells``: verifiers use it to change the inputs and check that formulas
    follow them, which a pasted constant does not.
    """

    def __init__(self, cells: dict[tuple[str, str], object], overrides: dict[tuple[str, str], object] | None = None):
        self.cells = {(s, normalize_ref(c)): v for (s, c), v in cells.items()}
        for (s, c), v in (overrides or {}).items():
            self.cells[(s, normalize_ref(c))] = v
        self._cache: dict[tuple[str, str], object] = {}
        self._active: set[tuple[str, str]] = set()

    # -- public -------------------------------------------------------------------

    def value(self, sheet: str, coord: str) -> object:
        key = (sheet, normalize_ref(coord))
        if key in self._cache:
            return self._cache[key]
        raw = self.cells.get(key)
        if isinstance(raw, str) and raw.startswith("=") and len(raw) > 1:
            if key in self._active:
                raise FormulaError(f"circular reference through {sheet}!{key[1]}")
            self._active.add(key)
            try:
                result = self.formula(raw, sheet)
            except FormulaError as exc:
                raise FormulaError(f"{sheet}!{key[1]} {raw}: {exc}") from None
            finally:
                self._active.discard(key)
        else:
            result = raw
        self._cache[key] = result
        return result

    def formula(self, formula: str, sheet: str) -> object:
        # parse completely into closures first; evaluating them may parse other cells' formulas
        self._tokens = tokenize(formula)
        self._pos = 0
        self._sheet = sheet
        node = self._compare()
        if self._pos != len(self._tokens):
            raise FormulaError(f"unexpected {self._tokens[self._pos][1]!r}")
        result = node()
        if isinstance(result, _Range):
            raise FormulaError("a range is not a single value")
        return result

    # -- parser: returns closures so cell values are read lazily ----------------------

    def _peek(self) -> tuple[str, str] | None:
        return self._tokens[self._pos] if self._pos < len(self._tokens) else None

    def _take(self, value: str | None = None) -> tuple[str, str]:
        tok = self._peek()
        if tok is None or (value is not None and tok[1].upper() != value):
            raise FormulaError(f"expected {value or 'more'} but found {tok[1] if tok else 'the end'}")
        self._pos += 1
        return tok

    def _binary(self, sub, ops: set[str], apply):
        left = sub()
        while (tok := self._peek()) is not None and tok[0] == "op" and tok[1] in ops:
            self._pos += 1
            right = sub()
            left = (lambda lf, rf, op: lambda: apply(op, lf(), rf()))(left, right, tok[1])
        return left

    def _compare(self):
        return self._binary(self._concat, {"=", "<>", "<", "<=", ">", ">="}, _compare)

    def _concat(self):
        return self._binary(self._additive, {"&"}, lambda op, a, b: _text(a) + _text(b))

    def _additive(self):
        return self._binary(self._multiplicative, {"+", "-"}, _arith)

    def _multiplicative(self):
        return self._binary(self._power, {"*", "/"}, _arith)

    def _power(self):
        return self._binary(self._unary, {"^"}, _arith)

    def _unary(self):
        tok = self._peek()
        if tok is not None and tok[0] == "op" and tok[1] in {"-", "+"}:
            self._pos += 1
            inner = self._unary()
            return (lambda f: lambda: -_number(f()))(inner) if tok[1] == "-" else (lambda f: lambda: _number(f()))(inner)
        return self._percent()

    def _percent(self):
        node = self._primary()
        while (tok := self._peek()) is not None and tok == ("op", "%"):
            self._pos += 1
            node = (lambda f: lambda: _number(f()) / 100)(node)
        return node

    def _primary(self):
        kind, text = self._take()
        if kind == "number":
            value = float(text)
            return lambda: value
        if kind == "string":
            value = text[1:-1].replace('""', '"')
            return lambda: value
        if kind == "bool":
            value = text.upper() == "TRUE"
            return lambda: value
        if kind == "ref":
            sheet, rest = _split_sheet(text)
            sheet = sheet or self._sheet
            if ":" in rest:
                start, end = rest.split(":")
                rng = _Range(sheet, start, end)
                return lambda: rng
            coord = normalize_ref(rest)
            return lambda: self.value(sheet, coord)
        if kind == "func":
            return self._function(text.upper())
        if (kind, text) == ("op", "("):
            node = self._compare()
            self._take(")")
            return node
        raise FormulaError(f"unexpected {text!r}")

    def _function(self, name: str):
        if name not in SUPPORTED_FUNCTIONS:
            raise FormulaError(f"function {name} is not supported (supported: {', '.join(SUPPORTED_FUNCTIONS)})")
        args = []
        if self._peek() == ("op", ")"):
            self._pos += 1
        else:
            while True:
                args.append(self._compare())
                tok = self._take()
                if tok == ("op", ")"):
                    break
                if tok != ("op", ","):
                    raise FormulaError(f"expected , or ) in {name}(), found {tok[1]!r}")
        if name == "IF":
            if len(args) not in (2, 3):
                raise FormulaError("IF takes 2 or 3 arguments")
            cond, yes = args[0], args[1]
            no = args[2] if len(args) == 3 else (lambda: False)
            return lambda: yes() if _truth(cond()) else no()
        return lambda: self._call(name, [a() for a in args])

    def _values(self, args: list[object], *, numbers_only: bool = True) -> list[object]:
        out = []
        for arg in args:
            if isinstance(arg, _Range):
                for coord in arg.coords:
                    v = self.value(arg.sheet, coord)
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        out.append(float(v))
                    elif not numbers_only and v is not None:
                        out.append(v)
            elif arg is not None:
                out.append(_number(arg) if numbers_only else arg)
        return out

    def _call(self, name: str, args: list[object]) -> object:
        if name == "SUM":
            return float(sum(self._values(args)))
        if name in ("MIN", "MAX"):
            vals = self._values(args)
            return float((min if name == "MIN" else max)(vals)) if vals else 0.0
        if name == "AVERAGE":
            vals = self._values(args)
            if not vals:
                raise FormulaError("AVERAGE of no numbers (#DIV/0!)")
            return sum(vals) / len(vals)
        if name == "ABS":
            _arity(name, args, 1)
            return abs(_number(args[0]))
        if name == "ROUND":
            _arity(name, args, 2)
            return _round(_number(args[0]), int(_number(args[1])))
        if name in ("AND", "OR"):
            vals = [_truth(v) for v in self._values(args, numbers_only=False)]
            if not vals:
                raise FormulaError(f"{name} of nothing")
            return all(vals) if name == "AND" else any(vals)
        if name == "NOT":
            _arity(name, args, 1)
            return not _truth(args[0])
        if name == "COUNTIF":
            _arity(name, args, 2)
            rng = _as_range(name, args[0])
            test = _criterion(args[1])
            return float(sum(1 for c in rng.coords if test(self.value(rng.sheet, c))))
        if name == "SUMIF":
            if len(args) not in (2, 3):
                raise FormulaError("SUMIF takes 2 or 3 arguments")
            rng = _as_range(name, args[0])
            total_rng = _as_range(name, args[2]) if len(args) == 3 else rng
            if len(total_rng.coords) != len(rng.coords):
                raise FormulaError("SUMIF ranges differ in size")
            test = _criterion(args[1])
            total = 0.0
            for c, t in zip(rng.coords, total_rng.coords):
                if test(self.value(rng.sheet, c)):
                    v = self.value(total_rng.sheet, t)
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        total += v
            return total
        raise FormulaError(f"function {name} is not supported")  # pragma: no cover - guarded above


def _arity(name: str, args: list[object], n: int) -> None:
    if len(args) != n:
        raise FormulaError(f"{name} takes {n} argument(s), got {len(args)}")


def _as_range(name: str, arg: object) -> _Range:
    if not isinstance(arg, _Range):
        raise FormulaError(f"{name} needs a range as its first argument")
    return arg


def _round(x: float, digits: int) -> float:
    """Excel rounds halves away from zero (Python's round() goes to even)."""
    factor = 10.0 ** digits
    return math.copysign(math.floor(abs(x) * factor + 0.5 + 1e-9) / factor, x)


def _number(v: object) -> float:
    if isinstance(v, _Range):
        raise FormulaError("a range used where a single value is needed")
    if v is None:
        return 0.0
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            raise FormulaError(f"text {v!r} used as a number (#VALUE!)") from None
    raise FormulaError(f"unsupported value {v!r}")


def _text(v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _truth(v: object) -> bool:
    if isinstance(v, str):
        if v.upper() in ("TRUE", "FALSE"):
            return v.upper() == "TRUE"
        raise FormulaError(f"text {v!r} used as a condition (#VALUE!)")
    return _number(v) != 0


def _arith(op: str, a: object, b: object) -> float:
    x, y = _number(a), _number(b)
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if op == "/":
        if y == 0:
            raise FormulaError("division by zero (#DIV/0!)")
        return x / y
    return x ** y


def _compare(op: str, a: object, b: object) -> bool:
    a = "" if a is None and isinstance(b, str) else (0.0 if a is None else a)
    b = "" if b is None and isinstance(a, str) else (0.0 if b is None else b)
    if isinstance(a, str) != isinstance(b, str):
        # Excel orders every number before every text
        left, right = (0, 1) if not isinstance(a, str) else (1, 0)
    elif isinstance(a, str):
        left, right = a.upper(), b.upper()
    else:
        left, right = _number(a), _number(b)
    return {"=": left == right, "<>": left != right, "<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]


def _criterion(crit: object):
    """COUNTIF/SUMIF criteria: a value (text compares case-insensitively) or an operator prefix (">0", "<>OK")."""
    if isinstance(crit, str):
        m = re.match(r"^(<=|>=|<>|<|>|=)?(.*)$", crit, re.S)
        op, operand = m.group(1) or "=", m.group(2)
        try:
            target: object = float(operand)
        except ValueError:
            target = operand
    else:
        op, target = "=", _number(crit)

    def test(v: object) -> bool:
        if v is None:
            return op == "<>" or (op == "=" and target == "")
        if isinstance(target, str) != isinstance(v, str) or isinstance(v, bool):
            return op == "<>"
        return _compare(op, v, target)

    return test


def cells_from_workbook(wb) -> dict[tuple[str, str], object]:
    """{(sheet, "A1"): value or formula} from an openpyxl workbook loaded with formulas (the default)."""
    cells: dict[tuple[str, str], object] = {}
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                value = cell.value
                if value is None:
                    continue
                if not isinstance(value, (str, int, float, bool)):
                    text = getattr(value, "text", None)  # openpyxl ArrayFormula / DataTableFormula
                    if isinstance(text, str):
                        raise FormulaError(f"{ws.title}!{cell.coordinate}: array/table formulas are not supported")
                    value = str(value)
                cells[(ws.title, cell.coordinate)] = value
    return cells


def references(formula: str) -> set[tuple[str | None, str]]:
    """Cells a formula mentions (ranges expanded), as (sheet or None, "A1")."""
    out: set[tuple[str | None, str]] = set()
    for kind, text in tokenize(formula):
        if kind != "ref":
            continue
        sheet, rest = _split_sheet(text)
        if ":" in rest:
            start, end = rest.split(":")
            out.update((sheet, c) for c in _Range(sheet or "", start, end).coords)
        else:
            out.add((sheet, normalize_ref(rest)))
    return out
