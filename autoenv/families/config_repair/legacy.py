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

import functools
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

    # every draw names and orders its corners anew, so two draws (the tests' configs and, at the archive level, the
    # archived ones) show the same corners in other bytes
    word = functools.partial(rng.choice, ["cache", "pool", "queue", "relay", "store", "batch", "proxy", "shard"])
    shuffled = lambda items: rng.sample(items, len(items))  # noqa: E731 - a one-line helper
    pad, group = word(), word()
    # the line buffer: lines on both sides of its size; a cut where a setting, a comment's tail or a header's starts
    long_lines = ["[server]", f"port = {rng.randint(1024, 9999)}", f"[{pad}s]"]
    long_lines += [padded(f"{pad}{i}", n) for i, n in enumerate((line_max - 3, line_max - 2, line_max - 1), 1)]
    long_lines += [f"[{group}]"]
    long_lines += [padded(f"{pad}{i}", n) for i, n in enumerate((line_max, line_max + 7, 2 * line_max + 11), 4)]
    long_lines += [
        "[server]",
        "note = " + "y" * (line_max - 1 - len("note = ")) + f"port = {rng.randint(1024, 9999)}",
        "# " + "-" * (line_max - 3) + rng.choice(["debug = on", "trace = yes", "verbose = 1"]),
        "[" + rng.choice("sqx") * (line_max + 4) + "]",
        f"{word()} = {rng.randint(1, 9)}",
        "no equals here",
    ]
    # the name buffer: keys and sections at, over and far over it (two become one), a UTF-8 name cut inside
    stem = (rng.choice(["request_timeout_sec_", "connection_pool_size_", "upstream_retry_delay_"]) * 3)[: keep + 6]
    section = (rng.choice(["authentication_gateway_", "metrics_export_pipeline_", "session_cache_cluster_"]) * 3)[
        : keep + 3
    ]
    letter, town = rng.choice("abmz"), rng.choice(["zürich", "köln", "genève"])
    names = ["[server]", f"{stem[: keep - 1]} = 1", f"{stem[:keep]} = 2", f"{stem[: keep + 1]} = 3"]
    names += [f"{stem} = 4", f"{letter * keep}_one = first", f"{letter * keep}_two = second"]
    names += [f"[{section[:keep]}]", "token = 5", f"[{section}]", "token = 6", "secret = 7"]
    names += [f"[{town}]", f"{town + 'é' * keep} = 8", f"{town + 'é' * (keep + 1)} = 9", "café = 10"]
    # numbers: 32-bit ends, 64-bit ends, signs, leading zeros, what is not all digits
    numbers = shuffled([
        "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967296", "4294967297", "0042", "+7", "-0",
        "00", "99999999999999999999", "-99999999999999999999", "9223372036854775807", "9223372036854775808",
        "0x1F", "1e3", "1_000", "12 ", "12\t", "- 5", "+", "-", "\uff13", " 5", "3.0", "+-1",
    ])  # fmt: skip
    # letter case: sections kept, keys folded; switches in any case, with blanks after them, or not switches at all
    switches = shuffled(["YES", "On", "TRUE", "tRuE", "No", "OFF", "False", "nO", "yes ", "yes\t", "y", "1", "enabled"])
    case = ["[Server]", "Port = 1", "[server]", "port = 2", "PORT = 3", "[SERVER]", "pOrT = 4", "[server]"]
    case += [f"Host = {word()}", f"HOST = {word()}", *grouped("flags", [f"s{i} = {v}" for i, v in enumerate(switches)])]
    # comments only where a line starts with one; a header's tail is ignored
    comments = ["# top", "   # indented", "\t; tabbed", "[paths]", f"file = /var/log/{word()}.log # rotated daily"]
    comments += [f"name = {word()} ; the queue", "key#x = 1", "#skipped = 1", ";also = 1", " ;[hidden]"]
    comments += ["[sect] # trailing comment", "k = v", "[sec;x]", "k = w", "[a]b]", "k = z", "[b]]", "k = y"]
    # blanks: spaces and tabs around keys and values (a value keeps trailing tabs), empty keys and values
    blanks = shuffled([
        "tabbed\t= value", "spaced = \tvalue", "tab_end = value\t", "mixed_end = value \t ", "only_spaces =    ",
        "empty=", "= value", "   = value", "max items = 5", "\tindented = 1", "inner = a  b", "trailing = value   ",
        "\x0bvtab = 1", "key \t = x", "\t \t", "eq = a = b",
    ])  # fmt: skip
    # repeated sections and keys: the last value, at the first place
    x, y, z, w, q = rng.sample("qwxyzkmn", 5)
    duplicates = ["[a]", f"{x} = 1", f"{y} = 2", "[b]", f"{z} = 3", "[a]", f"{x} = 10", f"{w} = 4", f"{x} = 11", "[b]"]
    duplicates += [f"{z} = 30", "[c]", f"{q} = 1", "[a]", f"{y} =", f"{x.upper()} = {rng.randint(12, 99)}"]
    # a section fuller than the tool allows, and more settings than its table holds
    big, k = word(), rng.choice("kvp")
    full_section = [f"[{big}]", *[f"{k}{i:02d} = {i}" for i in range(full + 3)], f"{k}00 = updated", "[other]"]
    full_section += ["o = 1", f"[{big}]", "late = 1", f"{k}01 = again"]
    sect, key = rng.choice(["s", "part", "zone"]), rng.choice(["key", "opt", "val"])
    many = [line for s in range(30) for line in [f"[{sect}{s:02d}]", *[f"{key}{j} = {s * 10 + j}" for j in range(5)]]]
    many += [f"[{sect}00]", f"{key}0 = changed", f"[{sect}29]", f"{key}0 = changed", "[extra]", "one = 1"]
    # more than 255 errors: the exit status is their count modulo 256
    mistakes = ["oops", "= x", "[broken", "  no_equals"]
    errors = ["[ok]", "a = 1", *[rng.choice(mistakes) for _ in range(256 + rng.randint(1, 12))], "b = 2"]
    # outside any section, `[]`, a header with blanks, one without `]`
    early, late = rng.sample(range(1, 99), 2)
    outside = [
        f"early = {early}",
        f"Early = {late}",
        "[]",
        "late = 3",
        "[ server ]",
        "port = 1",
        "[server]",
        "port = 2",
    ]
    outside += ["[server", "port = 3", "[x]", "[ server ]", "host = h"]
    quotes = ['"hello"', '"42"', '"0042"', '""', '"', '"a', "'single'", '"yes"', '" spaced "', '"a" # c', '"t"\t']
    quotes = shuffled([*quotes, '""quoted""', '"on', '"it\'s"'])
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


def instruction(service: str, ini: str, *, archived: bool = False) -> str:
    reads, removed = (
        ("read", "The tool was removed from every machine before anyone\n        wrote down what it does.")
        if archived
        else (
            "reads",
            "The tool is being removed from every machine, and\n        nobody has ever written down what it does.",
        )
    )  # fmt: skip
    return textwrap.dedent(f"""\
        # Retire the legacy `cfgnorm`

        The {service} service's launcher, written in 2004, {reads} its configuration through
        {CFGNORM.marker} tool, a C program whose source is lost: `{CFGNORM.tool} CONFIG` reads the
        INI-style file `CONFIG` and prints the configuration the launcher would load, with the problems
        it finds, and exits with a status of its own. {removed}

        Write `{CFGNORM.replacement}`, a replacement such that `python3 {CFGNORM.replacement} CONFIG` prints exactly
        what `cfgnorm CONFIG` prints, byte for byte, and exits with the same status, for **any** file
        `CONFIG` people may hand-edit, including the odd ones: very long lines, long section and key
        names in any letter case and in any bytes, comments and blanks in unexpected places, repeated
        sections and keys, numbers too large for the tool, quotes, more settings than the tool can keep,
        many errors, NUL and other stray bytes, CRLF line ends, a file that is empty or does not exist.
        What it writes to standard error does not matter.

        """) + CFGNORM.closing(
        f"- The service's config is `/app/config/{ini}`",
        "`cfgnorm` is installed here, so you can run it on\n  any file you like.\n",
        archived=archived,
    )


def generate(case: SeedCase, rng: random.Random, g: ModuleType, *, archived: bool = False) -> TaskDraft:
    """A level-5 task (``g``: the generator, for its settings): the tool built with drawn numbers, the service's
    config, hidden configs and the tool's own output for each; at level 6 (``archived``) the tool is gone and the
    archive of its runs on other configs of the same kinds is left."""
    params = {key: rng.choice(values) for key, values in CHOICES.items()}
    drawn = g.draw_config(rng)
    service, ini, sections, _, _ = drawn
    sample = sample_config(g, rng, drawn)
    hidden = hidden_configs(rng, params, sample)
    archive = None
    if archived:
        past = {**hidden_configs(rng, params, sample_config(g, rng, g.draw_config(rng))), ini: sample.encode()}
        archive = CFGNORM.archive_runs(params, past, rng, space=CHOICES)
    hint = f"{'archived' if archived else 'legacy'}-cfgnorm-{service}"
    return CFGNORM.draft(
        case, rng, family=g.NAME, category=g.CATEGORY, tags=g.TAGS, hint=hint,
        record={"service": service, "ini": ini, "sections": len(sections)},
        instruction=instruction(service, ini, archived=archived), params=params, sample_path=f"/app/config/{ini}",
        sample=sample, hidden=hidden, archive=archive,
    )  # fmt: skip
