"""config-repair level 5: retire a legacy C config reader whose behaviour is the specification.

The earlier levels tell the repair rules (or put them in a file a careful solver reads first), and a capable model
passes them nearly always. Here nothing is told: the task ships ``/usr/local/bin/cfgnorm``, a stripped static
binary built from ``files/cfgnorm.c`` with three numbers drawn per task (its line buffer, its name buffer, its
keys per section), and asks for ``/app/cfgnorm.py`` printing the same bytes, with the same exit status, for any
config. What a 2004 C program does with long lines, long or non-ASCII names, letter case, comments and blanks,
repeated sections and keys, 32-bit numbers, quotes, a full section or table and NUL bytes is found only by running
it on such input; the tests run the replacement on hidden configs made of exactly those corners, with the tool and
its licence removed first (a copy of the binary in /app cannot run, and is refused).

What every legacy-tool level shares (the build, the expected outputs, the task's files and tests, the solver's
turns) is :mod:`autoenv.families.legacy_tool`'s; this module draws the numbers, the inputs and the instruction.
"""

from __future__ import annotations

import random
import textwrap
from types import ModuleType
from typing import TYPE_CHECKING, Any

from autoenv.families.base import TaskDraft
from autoenv.families.legacy_tool import LegacyTool

if TYPE_CHECKING:
    from autoenv.shared.seed import SeedCase

#: The drawn parameters and the C names the tool is compiled with them as.
MACROS = {"line_max": "LINE_MAX_", "name_len": "NAME_LEN", "max_keys": "MAX_KEYS"}
CFGNORM = LegacyTool("cfgnorm", "1.4", __file__, MACROS, "config-repair level 5", "configs", "CONFIG")
#: The three compile-time numbers, drawn per task: what the solver has to find by running the tool. The shipped
#: config stays inside all three (its lines are shorter than 70 bytes, its names than 20, its sections under 6 keys).
CHOICES = {"line_max": (72, 80, 96, 120), "name_len": (20, 22, 24, 28), "max_keys": (6, 8, 9, 12)}
#: The tool's table of settings, fixed in its source (not drawn).
MAX_ENTRIES = 128


def sample_config(g: ModuleType, rng: random.Random, drawn: tuple[Any, ...]) -> str:
    """The service's config shipped in /app/config: comments, blank lines, spacing around `=`, switches written
    yes/on/true or no/off/false, some strings in double quotes, and none of the hidden corners (short lines and
    names, lower-case keys, one header per section, no repeated key, small numbers, no error)."""
    service, _, sections, schema, values = drawn  # g.draw_config's
    lines = [f"# {service} service configuration", "; read at start-up by the launcher, through cfgnorm", ""]
    for section in sections:
        lines.append(f"[{section}]")
        if rng.random() < 0.4:
            lines.append(f"# {section} settings, tuned in {rng.choice(['March', 'May', 'October'])}")
        for key in schema[section]:
            kind, value = g.POOL[section][key][0], values[(section, key)]
            if kind == "bool":
                text = rng.choice(["yes", "on", "true"] if value else ["no", "off", "false"])
            elif kind == "str" and rng.random() < 0.5:
                text = f'"{value}"'
            else:
                text = g._fmt(kind, value)
            lines.append(f"{key}{rng.choice([' = ', '=', ' = ', ' =  '])}{text}")
        lines.append("")
    return "\n".join(lines)


def hidden_configs(rng: random.Random, params: dict[str, int], sample: str) -> dict[str, bytes | None]:
    """The configs the tests run the replacement on, one corner each (None: a path that does not exist)."""
    line_max, keep, full = params["line_max"], params["name_len"] - 1, params["max_keys"]

    def text(lines: list[str]) -> bytes:
        return ("\n".join(lines) + "\n").encode()

    def grouped(title: str, settings: list[str], per: int = 4) -> list[str]:
        """``settings`` under headers ``[title1]``, ``[title2]``, ... of ``per`` settings each (under any table's
        limit)."""
        out = []
        for i in range(0, len(settings), per):
            out += [f"[{title}{i // per + 1}]", *settings[i : i + per]]
        return out

    def padded(key: str, total: int) -> str:
        """A setting whose line (without its newline) is ``total`` bytes long."""
        head = f"{key} = "
        return head + "v" * (total - len(head))

    # the line buffer: lines on both sides of its size; a cut where a setting, a comment's tail or a header's starts
    long_lines = ["[server]", "port = 8080", "[pads]"]
    long_lines += [padded(f"pad{i}", n) for i, n in enumerate((line_max - 3, line_max - 2, line_max - 1), 1)]
    long_lines += ["[longer]"]
    long_lines += [padded(f"pad{i}", n) for i, n in enumerate((line_max, line_max + 7, 2 * line_max + 11), 4)]
    long_lines += [
        "[server]",
        "note = " + "y" * (line_max - 1 - len("note = ")) + "port = 9090",
        "# " + "-" * (line_max - 3) + "debug = on",
        "[" + "s" * (line_max + 4) + "]",
        "after = 1",
        "no equals here",
    ]
    # the name buffer: keys and sections at, over and far over it (two become one), a UTF-8 name cut inside
    stem = ("request_timeout_sec_" * 3)[: keep + 6]
    section = ("authentication_gateway_" * 3)[: keep + 3]
    names = ["[server]", f"{stem[: keep - 1]} = 1", f"{stem[:keep]} = 2", f"{stem[: keep + 1]} = 3"]
    names += [f"{stem} = 4", f"{'a' * keep}_one = first", f"{'a' * keep}_two = second"]
    names += [f"[{section[:keep]}]", "token = 5", f"[{section}]", "token = 6", "secret = 7"]
    names += ["[zürich]", f"{'zürich' + 'é' * keep} = 8", f"{'zürich' + 'é' * (keep + 1)} = 9", "café = 10"]
    # numbers: 32-bit ends, 64-bit ends, signs, leading zeros, what is not all digits
    numbers = [
        "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967296", "4294967297", "0042", "+7", "-0",
        "00", "99999999999999999999", "-99999999999999999999", "9223372036854775807", "9223372036854775808",
        "0x1F", "1e3", "1_000", "12 ", "12\t", "- 5", "+", "-", "\uff13", " 5", "3.0", "+-1",
    ]  # fmt: skip
    # letter case: sections kept, keys folded; switches in any case, with blanks after them, or not switches at all
    switches = ["YES", "On", "TRUE", "tRuE", "No", "OFF", "False", "nO", "yes ", "yes\t", "y", "1", "enabled"]
    case = ["[Server]", "Port = 1", "[server]", "port = 2", "PORT = 3", "[SERVER]", "pOrT = 4", "[server]"]
    case += ["Host = a", "HOST = b", *grouped("flags", [f"s{i} = {v}" for i, v in enumerate(switches)])]
    # comments only where a line starts with one; a header's tail is ignored
    comments = ["# top", "   # indented", "\t; tabbed", "[paths]", "file = /var/log/app.log # rotated daily"]
    comments += ["name = orders ; the queue", "key#x = 1", "#skipped = 1", ";also = 1", " ;[hidden]"]
    comments += ["[sect] # trailing comment", "k = v", "[sec;x]", "k = w", "[a]b]", "k = z", "[b]]", "k = y"]
    # blanks: spaces and tabs around keys and values (a value keeps trailing tabs), empty keys and values
    blanks = [
        "tabbed\t= value", "spaced = \tvalue", "tab_end = value\t", "mixed_end = value \t ", "only_spaces =    ",
        "empty=", "= value", "   = value", "max items = 5", "\tindented = 1", "inner = a  b", "trailing = value   ",
        "\x0bvtab = 1", "key \t = x", "\t \t", "eq = a = b",
    ]  # fmt: skip
    # repeated sections and keys: the last value, at the first place
    duplicates = ["[a]", "x = 1", "y = 2", "[b]", "z = 3", "[a]", "x = 10", "w = 4", "x = 11", "[b]", "z = 30"]
    duplicates += ["[c]", "q = 1", "[a]", "y =", "X = 12"]
    # a section fuller than the tool allows, and more settings than its table holds
    full_section = ["[big]", *[f"k{i:02d} = {i}" for i in range(full + 3)], "k00 = updated", "[other]", "o = 1"]
    full_section += ["[big]", "late = 1", "k01 = again"]
    many = [line for s in range(30) for line in [f"[s{s:02d}]", *[f"key{k} = {s * 10 + k}" for k in range(5)]]]
    many += ["[s00]", "key0 = changed", "[s29]", "key0 = changed", "[extra]", "one = 1"]
    # more than 255 errors: the exit status is their count modulo 256
    mistakes = ["oops", "= x", "[broken", "  no_equals"]
    errors = ["[ok]", "a = 1", *[mistakes[i % 4] for i in range(256 + rng.randint(1, 12))], "b = 2"]
    # outside any section, `[]`, a header with blanks, one without `]`
    outside = ["early = 1", "Early = 2", "[]", "late = 3", "[ server ]", "port = 1", "[server]", "port = 2"]
    outside += ["[server", "port = 3", "[x]", "[ server ]", "host = h"]
    quotes = ['"hello"', '"42"', '"0042"', '""', '"', '"a', "'single'", '"yes"', '" spaced "', '"a" # c', '"t"\t']
    quotes += ['""quoted""', '"on', '"it\'s"']
    raw = [
        b"[bytes]",
        b"after = abc\0def",
        b"before\0 = 1",
        b"\0skipped = 1",
        b"crcr = value\r\r",
        b"\r",
        b"\t",
        b"high = caf\xc3\xa9 \xff\xfe",
        b"caf\xc3\xa9 = 1",
        b"mid = 1\rb = 2",
        b"\x0c = form feed",
        b"\xffkey = \x80",
    ]
    # CRLF line ends, some after trailing spaces
    crlf = "".join(
        f"{line}{'  ' if '=' in line and i % 3 == 0 else ''}\r\n" for i, line in enumerate(sample.splitlines())
    )
    return {
        "long_lines.ini": text(long_lines),
        "long_names.ini": text(names),
        "numbers.ini": text(grouped("limits", [f"n{i} = {v}" for i, v in enumerate(numbers)])),
        "letter_case.ini": text(case),
        "comments.ini": text(comments),
        "blanks.ini": text(grouped("blanks", blanks)),
        "duplicates.ini": text(duplicates),
        "full_section.ini": text(full_section),
        "many_settings.ini": text(many),
        "many_errors.ini": text(errors),
        "no_section.ini": text(outside),
        "quotes.ini": text(grouped("quotes", [f"q{i} = {v}" for i, v in enumerate(quotes)])),
        "bytes.ini": b"\n".join(raw) + b"\n",
        "crlf.ini": crlf.encode(),
        "empty.ini": b"",
        "blank_lines.ini": b"\n\r\n\n   \n",
        "no_newline_at_end.ini": b"[server]\nport = 8080\nhost = 10.0.0.1",
        "missing.ini": None,
    }


def instruction(service: str, ini: str) -> str:
    return (
        textwrap.dedent(f"""\
        # Retire the legacy `cfgnorm`

        The {service} service's launcher, written in 2004, reads its configuration through
        {CFGNORM.marker} tool, a C program whose source is lost: `{CFGNORM.tool} CONFIG` reads the
        INI-style file `CONFIG` and prints the configuration the launcher would load, with the problems
        it finds, and exits with a status of its own. The tool is being removed from every machine, and
        nobody has ever written down what it does.

        Write `{CFGNORM.replacement}`, a replacement such that `python3 {CFGNORM.replacement} CONFIG` prints exactly
        what `cfgnorm CONFIG` prints, byte for byte, and exits with the same status, for **any** file
        `CONFIG` people may hand-edit, including the odd ones: very long lines, long section and key
        names in any letter case and in any bytes, comments and blanks in unexpected places, repeated
        sections and keys, numbers too large for the tool, quotes, more settings than the tool can keep,
        many errors, NUL and other stray bytes, CRLF line ends, a file that is empty or does not exist.
        What it writes to standard error does not matter.

        - The service's config is `/app/config/{ini}`; `cfgnorm` is installed here, so you can run it on
          any file you like.
        """)
        + CFGNORM.retirement_note()
    )


def generate(case: SeedCase, rng: random.Random, g: ModuleType) -> TaskDraft:
    """A level-5 task (``g``: the generator, for its settings): the tool built with drawn numbers, the service's
    config, hidden configs and the tool's own output for each."""
    params = {key: rng.choice(values) for key, values in CHOICES.items()}
    drawn = g.draw_config(rng)
    service, ini, sections, _, _ = drawn
    sample = sample_config(g, rng, drawn)
    return CFGNORM.draft(
        case, rng, family=g.NAME, category=g.CATEGORY, tags=g.TAGS, hint=f"legacy-cfgnorm-{service}",
        record={"service": service, "ini": ini, "sections": len(sections)}, instruction=instruction(service, ini),
        params=params, sample_path=f"/app/config/{ini}", sample=sample, hidden=hidden_configs(rng, params, sample),
    )  # fmt: skip
