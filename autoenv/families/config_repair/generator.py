"""Config repair family: a hand-edited INI file the launcher rejects.

Seed failures: deleting settings to silence errors, "fixing" syntax but
guessing values, rewriting the launcher instead of the config. The breakages
are ones people make in hand-edited files (a missing ``=``, a number written
in words, units in a numeric field, quoted strings, yes/no for booleans,
lower-case enum values); the intended value is always evident from the
broken one, and the tests check every key's value, not just that the launcher
starts. That is level 1 of a 7-level ladder (:data:`LADDER`, :mod:`.ladder`): structural breakages whose
error points elsewhere, the 2.x formats found in the config's notes, a repair program run on unseen configs;
levels 5 and 6 (:mod:`.legacy`), retiring the launcher's legacy C config reader, whose behaviour (then only its
archived runs) is the specification; and level 7 (:mod:`.windows`), planning the fleet's maintenance windows, a
search.
"""

from __future__ import annotations

import random
import sys
import textwrap
from typing import TYPE_CHECKING, Any

from autoenv.families.base import TaskDraft, sha256_text, solve_sh, task_files, task_name
from autoenv.families.config_repair import ladder, legacy, windows
from autoenv.families.levels import load_ladder

if TYPE_CHECKING:  # families read seed cases; they do not depend on the proposer
    from autoenv.shared.seed import SeedCase

NAME = "config-repair"
DESCRIPTION = "repair a hand-edited INI file so the launcher accepts it, keeping intended values"
KEYWORDS = ("config", "ini", "configuration", "repair", "settings", "launcher", "yaml", "toml")
CATEGORY = "configuration"
TAGS = ["python", "ini", "configparser", "repair"]

#: Level 1 is the task of earlier releases; levels 2-4 are :mod:`autoenv.families.config_repair.ladder`, level 5
#: :mod:`autoenv.families.config_repair.legacy`.
LADDER, DEFAULT_LEVEL = load_ladder(__file__)  # levels.toml beside this file

WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
]

#: section -> key -> (type, candidate values); type is int/float/bool/str or a tuple of allowed words
POOL: dict[str, dict[str, tuple[Any, list[Any]]]] = {
    "server": {
        "host": ("str", ["0.0.0.0", "127.0.0.1", "10.0.4.12"]),
        "port": ("int", [8080, 8443, 9000, 5000]),
        "workers": ("int", [2, 4, 6, 8, 12]),
        "debug": ("bool", [False, True]),
        "request_timeout_sec": ("float", [2.5, 7.5, 15.0, 30.0]),
    },
    "database": {
        "url": ("str", ["sqlite:////srv/data/orders.db", "postgresql://app@db:5432/orders"]),
        "pool_size": ("int", [5, 10, 16]),
        "timeout_sec": ("float", [1.5, 2.5, 4.0]),
        "echo_sql": ("bool", [False, True]),
    },
    "cache": {
        "backend": (("memory", "redis", "none"), ["memory", "redis"]),
        "ttl_sec": ("int", [60, 300, 900]),
        "max_items": ("int", [1000, 5000, 20000]),
        "enabled": ("bool", [True, False]),
    },
    "logging": {
        "level": (("DEBUG", "INFO", "WARNING", "ERROR"), ["INFO", "WARNING", "ERROR"]),
        "file": ("str", ["/var/log/app/service.log", "/srv/logs/app.log"]),
        "rotate_mb": ("int", [10, 50, 100]),
    },
    "queue": {
        "name": ("str", ["orders", "invoices", "emails"]),
        "prefetch": ("int", [1, 4, 8, 16]),
        "retry_delay_sec": ("float", [0.5, 1.5, 3.0]),
        "durable": ("bool", [True, False]),
    },
}

LAUNCHER = '''\
"""Launcher of the {service} service. Validates config/{ini} before starting.

    python3 service.py --check    # validate only; prints CONFIG OK
    python3 service.py            # validate, then print the start-up banner
"""

import configparser
import sys
from pathlib import Path

CONFIG = Path(__file__).with_name("config") / "{ini}"

#: section -> key -> expected type ("int", "float", "bool", "str") or the allowed values
SCHEMA = {schema}


def convert(kind, raw):
    if isinstance(kind, (list, tuple)):
        if raw not in kind:
            raise ValueError(f"must be one of {{', '.join(kind)}}")
        return raw
    if kind == "int":
        if not raw.lstrip("-").isdigit():
            raise ValueError("must be an integer written with digits")
        return int(raw)
    if kind == "float":
        try:
            return float(raw)
        except ValueError:
            raise ValueError("must be a decimal number") from None
    if kind == "bool":
        if raw not in ("true", "false"):
            raise ValueError("must be true or false")
        return raw == "true"
    if not raw or raw[0] in "\\"'" or raw[-1] in "\\"'":
        raise ValueError("must be a plain, unquoted string")
    return raw


def load():
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    try:
        parser.read_string(CONFIG.read_text(), source=str(CONFIG))
    except configparser.Error as exc:
        raise SystemExit(f"config error: {{exc}}")
    errors, values = [], {{}}
    for section, keys in SCHEMA.items():
        if not parser.has_section(section):
            errors.append(f"[{{section}}] section missing")
            continue
        for key, kind in keys.items():
            if not parser.has_option(section, key):
                errors.append(f"{{section}}.{{key}}: missing")
                continue
            raw = parser.get(section, key).strip()
            try:
                values[(section, key)] = convert(kind, raw)
            except ValueError as exc:
                errors.append(f"{{section}}.{{key}} = {{raw!r}}: {{exc}}")
        for key in parser.options(section):
            if key not in keys:
                errors.append(f"{{section}}.{{key}}: unknown setting")
    if errors:
        raise SystemExit("config error:\\n  " + "\\n  ".join(errors))
    return values


def main(argv):
    values = load()
    if "--check" in argv:
        print("CONFIG OK")
        return 0
    print(f"{service} ready with {{len(values)}} settings")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''

BREAKAGES = ("missing_equals", "number_words", "unit_suffix", "quoted", "yes_no", "enum_case")


def _fmt(kind: Any, value: Any) -> str:
    if kind == "bool":
        return "true" if value else "false"
    return str(value)


def _break(kind: Any, key: str, value: Any, how: str, rng: random.Random) -> str | None:
    """The broken line for ``key``, or None if this breakage does not fit the key's type."""
    if how == "missing_equals":
        return f"{key} {_fmt(kind, value)}"
    if how == "number_words" and kind == "int" and 0 <= value < len(WORDS):
        return f"{key} = {WORDS[value]}"
    if how == "unit_suffix" and kind in ("int", "float"):
        unit = "s" if key.endswith("_sec") else ("MB" if key.endswith("_mb") else " items")
        return f"{key} = {value}{unit}"
    if how == "quoted" and kind == "str":
        q = rng.choice(['"', "'"])
        return f"{key} = {q}{value}{q}"
    if how == "yes_no" and kind == "bool":
        return f"{key} = {rng.choice(['yes', 'on']) if value else rng.choice(['no', 'off'])}"
    if how == "enum_case" and isinstance(kind, tuple):
        return f"{key} = {str(value).lower() if str(value).isupper() else str(value).upper()}"
    return None


#: Level 1's rule for invalid values (level 2 states it too).
VALUE_RULES = textwrap.dedent("""\
    - Where a value is invalid, replace it with the value that was evidently
      intended (a number written out in words is that number, a unit after
      a number is dropped, quotes around a string are removed, `yes`/`on`
      mean `true` and `no`/`off` mean `false`, an allowed value in the wrong
      letter case is that allowed value).
    """)


def instruction_text(service: str, ini: str, broke: str, rules: str) -> str:
    """The instruction: what is broken (``broke``, the end of a sentence), the check to pass, the rules every level
    has, then ``rules`` (bullet lines)."""
    return (
        textwrap.dedent(f"""\
        # Repair the {service} service configuration

        The {service} service in `/app` refuses to start. Its launcher,
        `/app/service.py`, reads `/app/config/{ini}`, and somebody edited that
        """)
        + broke
        + textwrap.dedent(f"""
        Repair the configuration so that

        ```
        cd /app && python3 service.py --check
        ```

        prints `CONFIG OK` and exits with status 0.

        Rules:

        - Do **not** modify `/app/service.py`; read it to learn what it accepts.
          Fix only `/app/config/{ini}` and keep its name and location.
        - Keep every setting that is already valid exactly as it is, and keep
          every section and key that is there now (do not delete settings to
          make errors go away, and do not add new ones).
        """)
        + rules
    )


def draw_config(
    rng: random.Random,
) -> tuple[str, str, list[str], dict[str, dict[str, Any]], dict[tuple[str, str], Any]]:
    """A service's name, config file name, sections, schema (section -> key -> kind) and intended values."""
    service = rng.choice(["orders", "billing", "catalog", "notifier", "ledger"])
    ini = rng.choice(["app.ini", "settings.ini", "service.ini"])
    sections = ["server"] + rng.sample([s for s in POOL if s != "server"], rng.randint(2, 3))
    schema: dict[str, dict[str, Any]] = {}
    values: dict[tuple[str, str], Any] = {}
    for section in sections:
        keys = list(POOL[section])
        chosen = keys if len(keys) <= 4 else sorted(rng.sample(keys, 4), key=keys.index)
        schema[section] = {}
        for key in chosen:
            kind, candidates = POOL[section][key]
            schema[section][key] = list(kind) if isinstance(kind, tuple) else kind
            values[(section, key)] = rng.choice(candidates)
    return service, ini, sections, schema, values


def break_values(
    rng: random.Random, values: dict[tuple[str, str], Any], skip: frozenset[tuple[str, str]] = frozenset()
) -> tuple[dict[tuple[str, str], str], list[str]]:
    """3-5 distinct keys (none of ``skip``) broken by level 1's breakages, each one that fits the key's type: the
    broken lines and the breakages used."""
    broken: dict[tuple[str, str], str] = {}
    kinds_used: list[str] = []
    order = list(values)
    rng.shuffle(order)
    wanted = rng.randint(3, 5)
    for sk in order:
        if len(broken) >= wanted:
            break
        if sk in skip:
            continue
        kind = POOL[sk[0]][sk[1]][0]
        options = [
            b for b in BREAKAGES if _break(kind, sk[1], values[sk], b, rng) is not None and kinds_used.count(b) < 2
        ]
        if not options:
            continue
        how = rng.choice(options)
        line = _break(kind, sk[1], values[sk], how, rng)
        assert line is not None
        broken[sk] = line
        kinds_used.append(how)
    return broken, kinds_used


def generate(case: SeedCase, rng: random.Random, level: int = DEFAULT_LEVEL) -> TaskDraft:
    """A task of ``level`` (:data:`LADDER`); level 1 draws exactly the tasks of earlier releases."""
    if level >= 7:  # the fleet's maintenance windows: a search, a task of its own shape (windows.py)
        return windows.generate(case, rng, family=NAME)
    if level >= 5:  # the legacy config reader (6: only the archive of its runs is left): a task of its own shape
        return legacy.generate(case, rng, sys.modules[__name__], archived=level >= 6)
    if level >= 2:
        return ladder.generate(case, rng, level, sys.modules[__name__])
    service, ini, sections, schema, values = draw_config(rng)
    broken, kinds_used = break_values(rng, values)
    good_lines, bad_lines = (
        [f"# {service} service configuration", "# edited by hand; see service.py for what is accepted", ""],
        None,
    )
    bad_lines = list(good_lines)
    for section in sections:
        for lines in (good_lines, bad_lines):
            lines.append(f"[{section}]")
        for key in schema[section]:
            kind = POOL[section][key][0]
            good = f"{key} = {_fmt(kind, values[(section, key)])}"
            good_lines.append(good)
            bad_lines.append(broken.get((section, key), good))
        for lines in (good_lines, bad_lines):
            lines.append("")
    good_ini, bad_ini = "\n".join(good_lines), "\n".join(bad_lines)
    launcher = LAUNCHER.format(service=service, ini=ini, schema=_schema_literal(schema))
    expected = {f"{s}.{k}": _fmt(POOL[s][k][0], v) for (s, k), v in values.items()}

    instruction = instruction_text(
        service,
        ini,
        "file by hand and broke it: there are syntax errors as well as values\nthe launcher rejects.\n",
        VALUE_RULES
        + textwrap.dedent("""\
            - The file must remain readable by `configparser` (the launcher uses
              `ConfigParser(interpolation=None, strict=True)`).
            """),
    )
    tests = (
        textwrap.dedent(f'''\
        import configparser
        import hashlib
        from pathlib import Path

        import pytest
        from agentcall import run_agent  # the launcher (and any module it imports from /app) runs as nobody

        APP = Path("/app/service.py")
        APP_SHA256 = "{sha256_text(launcher)}"
        INI = Path("/app/config/{ini}")
        # section.key -> the intended value, as the launcher accepts it
        EXPECTED = {expected!r}


        def load():
            parser = configparser.ConfigParser(interpolation=None, strict=True)
            parser.read_string(INI.read_text())
            return parser


        ''')
        + ladder.LAUNCHER_TESTS
        + textwrap.dedent("""\


        def test_same_sections_and_keys():
            parser = load()
            got = {f"{s}.{k}" for s in parser.sections() for k in parser.options(s)}
            assert got == set(EXPECTED)


        @pytest.mark.parametrize("name", sorted(EXPECTED))
        def test_intended_value(name):
            section, key = name.split(".", 1)
            assert load().get(section, key).strip() == EXPECTED[name]
        """)  # noqa: E501
    )
    solution = solve_sh(f"cat > /app/config/{ini} <<'INI'\n{good_ini}INI\ncd /app && python3 service.py --check\n")
    name = task_name("config-repair", rng, service)
    app = {"service.py": launcher, f"config/{ini}": bad_ini}
    files = task_files(case, NAME, CATEGORY, TAGS, instruction, solution, tests, app=app)
    params = {
        "service": service,
        "ini": ini,
        "sections": len(sections),
        "breakages": sorted(set(kinds_used)),
        "n_broken": len(broken),
        "leak_hint": None,
        "stale_output": None,
        "output_path": f"/app/config/{ini}",
    }
    return TaskDraft(name=name, family="config-repair", files=files, params=params)


def _schema_literal(schema: dict[str, dict[str, Any]]) -> str:
    lines = ["{"]
    for section, keys in schema.items():
        lines.append(f"    {section!r}: {{")
        for key, kind in keys.items():
            lines.append(f"        {key!r}: {tuple(kind) if isinstance(kind, list) else kind!r},")
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines)
