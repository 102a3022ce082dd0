"""config-repair above level 1: breakages whose error points elsewhere, rules found in the notes, unseen configs.

Level 2 adds structural breakages to level 1's value breakages: an indented setting (configparser reads it as a
continuation of the previous value, so the launcher blames that key, or a missing one), a UTF-8 byte-order mark
(the launcher says the file has no section header), comments after values (a string setting then passes the
launcher's check with the comment in its value) and a section whose last setting sits under a second header
(strict parsing rejects the duplicate). Level 3 tells no repair rule: the file was written for the service's 2.x
launcher and ``config/CHANGES.md`` says how 2.x files differ, including 2.x formats level 1 never had (durations in
``ms``/``m``/``h``, counts in thousands, ``enabled``/``disabled``). Level 4 asks for the repair as a program,
``/app/repair_config.py IN OUT``, which the tests run on unseen broken configs of the same service.
"""

from __future__ import annotations

import json
import random
import textwrap
from types import ModuleType
from typing import TYPE_CHECKING, Any

from autoenv.families.base import TaskDraft, sha256_text, solve_sh, task_files, task_name
from autoenv.families.solver import fill_program, program_source

if TYPE_CHECKING:
    from autoenv.shared.seed import SeedCase

PROGRAM = "/app/repair_config.py"
STRUCTURAL = ("indented", "bom", "inline_comment", "split_section")


def old_format(key: str, kind: Any, value: Any) -> str | None:
    """How the 2.x launcher's files wrote ``value`` where 3.0 rejects it (None: no such format for this key)."""
    if kind == "bool":
        return "enabled" if value else "disabled"
    if key.endswith("_sec") and kind in ("int", "float"):
        if value >= 60 and value % 60 == 0:
            return f"{int(value // 60)}m"
        return f"{round(value * 1000)}ms"
    if key == "max_items":
        return f"{value // 1000}k"
    return None


CHANGES = """\
# Changes to the {service} service's configuration

## 3.0

The launcher (`service.py`) now reads `config/{ini}` strictly, with `configparser`
(`ConfigParser(interpolation=None, strict=True)`) and the types of its `SCHEMA`. Files written
for 2.x must be converted; each 2.x form below means the value shown:

- durations (settings ending in `_sec`) are plain seconds: 2.x wrote `250ms` (0.25), `2m` (120),
  `1h` (3600) and `30s` (30);
- counts are plain digits: 2.x wrote thousands as `5k` (5000), numbers up to twenty in words
  (`twelve`) and units after numbers (`50MB`, `5000 items`);
- switches are `true` or `false`: 2.x also read `yes`/`on`/`enabled` and `no`/`off`/`disabled`;
- values from a fixed list are written exactly as `SCHEMA` lists them (2.x ignored letter case);
- strings are written without quotes (2.x removed them);
- a setting is `key = value` (2.x also read `key value`);
- a comment goes on a line of its own: everything after `=` is the value (2.x cut values at a `#` or
  `;` that follows white space);
- a setting starts at the beginning of its line: an indented line continues the value above it
  (2.x files indented some settings for readability);
- a section has one `[header]` (2.x merged repeated sections);
- the file is plain UTF-8 without a byte-order mark (2.x's editor on Windows wrote one).

## 2.4

- `max_items` accepts the `k` suffix above and the `_sec` settings the duration units above.
"""

#: Level 2's rules, added to level 1's in the instruction.
STRUCTURAL_RULES = textwrap.dedent("""\
    - A setting starts at the beginning of its line: an indented setting was meant
      as a setting of its own (`configparser` reads it as a continuation of the
      value above it).
    - A comment after a value (`# ...` or `; ...`) is not part of the value: the
      launcher's parser does not cut it off, so move it to a line of its own or
      drop it.
    - A section appears once: settings under a repeated `[header]` belong to the
      section of that name.
    - The file is plain UTF-8 without a byte-order mark.
    """)


def broken_config(
    g: ModuleType,
    rng: random.Random,
    service: str,
    sections: list[str],
    schema: dict[str, dict[str, Any]],
    values: dict[tuple[str, str], Any],
    level: int,
) -> tuple[str, str, dict[str, Any]]:
    """The intended file, the broken one and what was broken, for a level >= 2 task (``g``: the generator)."""
    POOL = g.POOL
    old: dict[tuple[str, str], str] = {}
    if level >= 3:  # 2.x formats, found in CHANGES.md
        fits = [sk for sk in values if old_format(sk[1], POOL[sk[0]][sk[1]][0], values[sk]) is not None]
        for sk in rng.sample(fits, min(len(fits), rng.randint(2, 3))):
            old[sk] = f"{sk[1]} = {old_format(sk[1], POOL[sk[0]][sk[1]][0], values[sk])}"
    broken, kinds = g.break_values(rng, values, skip=frozenset(old))
    broken.update(old)
    structural = sorted(rng.sample(STRUCTURAL, 3))
    good = {sk: f"{sk[1]} = {g._fmt(POOL[sk[0]][sk[1]][0], v)}" for sk, v in values.items()}
    bad = {sk: broken.get(sk, line) for sk, line in good.items()}
    plain = [sk for sk in values if sk not in broken]
    if "inline_comment" in structural:
        for sk in rng.sample(plain, min(2, len(plain))):
            bad[sk] += rng.choice(["  # tuned in May", "   ; see ticket OPS-212", "  # was lower"])
    moved = rng.choice([(s, list(schema[s])[-1]) for s in sections]) if "split_section" in structural else None
    if "indented" in structural:  # never a section's first setting (nothing above it to continue), nor the moved one
        later = [sk for sk in values if list(schema[sk[0]]).index(sk[1]) > 0 and sk != moved]
        sk = rng.choice(later)
        bad[sk] = "    " + bad[sk]
    header = [f"# {service} service configuration", "# edited by hand; see service.py for what is accepted", ""]
    good_lines, bad_lines = list(header), list(header)
    for section in sections:
        good_lines.append(f"[{section}]")
        bad_lines.append(f"[{section}]")
        for key in schema[section]:
            good_lines.append(good[(section, key)])
            if (section, key) != moved:
                bad_lines.append(bad[(section, key)])
        good_lines.append("")
        bad_lines.append("")
    if moved:
        bad_lines += [f"[{moved[0]}]", bad[moved], ""]
    bad_text = "\n".join(bad_lines)
    if "bom" in structural:
        bad_text = "\ufeff" + bad_text
    info = {"breakages": sorted(set(kinds)), "old_formats": len(old), "structural": structural}
    return "\n".join(good_lines), bad_text, info


def expected_values(values: dict[tuple[str, str], Any]) -> dict[str, Any]:
    """section.key -> the intended value as the launcher converts it (int, float, bool or str)."""
    return {f"{s}.{k}": v for (s, k), v in values.items()}


#: The launcher's own tests, the same at every level: it is unchanged and its check passes.
LAUNCHER_TESTS = """\
def test_launcher_unchanged():
    assert hashlib.sha256(APP.read_bytes()).hexdigest() == APP_SHA256


def test_check_passes():
    out = run_agent(["python3", str(APP), "--check"], cwd="/app", text=True, timeout=30)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip() == "CONFIG OK"
"""

TESTS = (
    '''\
import configparser
import hashlib
import json
from pathlib import Path

import pytest
from agentcall import agent_folder, read_agent_file, run_agent  # the agent's code runs as nobody

APP = Path("/app/service.py")
APP_SHA256 = "{launcher_sha}"
INI = Path("/app/config/{ini}")
KINDS = json.loads({kinds!r})
# section.key -> the intended value, as the launcher converts it
EXPECTED = json.loads({expected!r})


def load(text):
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.read_string(text)
    return parser


def converted(parser, name):
    """The value as the launcher's SCHEMA converts it (None where the launcher would reject it)."""
    section, key = name.split(".", 1)
    raw, kind = parser.get(section, key).strip(), KINDS[name]
    if isinstance(kind, list):
        return raw if raw in kind else None
    if kind == "int":
        return int(raw) if raw.lstrip("-").isdigit() else None
    if kind == "float":
        try:
            return float(raw)
        except ValueError:
            return None
    if kind == "bool":
        return {{"true": True, "false": False}}.get(raw)
    return raw if raw and raw[0] not in "\\"'" and raw[-1] not in "\\"'" else None


def same_values(parser, expected):
    got = {{f"{{s}}.{{k}}" for s in parser.sections() for k in parser.options(s)}}
    assert got == set(expected), sorted(got ^ set(expected))
    for name, want in sorted(expected.items()):
        assert converted(parser, name) == want, (name, parser.get(*name.split(".", 1)), want)


'''
    + LAUNCHER_TESTS
    + """

def test_intended_values():
    same_values(load(INI.read_text(encoding="utf-8")), EXPECTED)
"""
)

PROGRAM_TESTS = """\


# -- the repair program, on broken configs the solver never saw --------------------------------
HIDDEN = json.loads({hidden!r})


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_program_on_unseen_config(name):
    work = agent_folder({{"in.ini": Path(__file__).with_name(name).read_bytes()}}, writable=True)
    out = run_agent(["python3", "{program}", str(work / "in.ini"), str(work / "out.ini")], cwd="/app", text=True,
                    timeout=30)
    assert out.returncode == 0, out.stderr[-2000:]
    same_values(load(read_agent_file(work / "out.ini")), HIDDEN[name])
"""


def generate(case: SeedCase, rng: random.Random, level: int, g: ModuleType) -> TaskDraft:
    """A config-repair task of ``level`` >= 2 (:data:`~autoenv.families.config_repair.generator.LADDER`); ``g`` is the
    generator module, for level 1's settings, breakages and launcher."""
    service, ini, sections, schema, values = g.draw_config(rng)
    good_ini, bad_ini, info = broken_config(g, rng, service, sections, schema, values, level)
    launcher = g.LAUNCHER.format(service=service, ini=ini, schema=g._schema_literal(schema))
    kinds = {f"{s}.{k}": kind for s, keys in schema.items() for k, kind in keys.items()}
    app = {"service.py": launcher, f"config/{ini}": bad_ini}
    if level == 2:
        rules = g.VALUE_RULES + STRUCTURAL_RULES
    else:
        app["config/CHANGES.md"] = CHANGES.format(service=service, ini=ini)
        rules = textwrap.dedent("""\
            - Where a value or a line is not what the launcher accepts, write what was
              evidently intended. The file was written for the service's 2.x launcher:
              `/app/config/CHANGES.md` says how 2.x files differ from what it reads now.
              Some lines the launcher accepts are still not what was intended.
            """)
    broke = (
        "file by hand and broke it in several ways at once; the launcher's first\n"
        "error is not always where the problem is.\n"
    )
    instruction = g.instruction_text(
        service, ini, broke, rules + "- The tests read every value as the launcher converts it.\n"
    )
    tests = TESTS.format(
        launcher_sha=sha256_text(launcher),
        ini=ini,
        kinds=json_dumps(kinds),
        expected=json_dumps(expected_values(values)),
    )
    solution = solve_sh(f"cat > /app/config/{ini} <<'INI'\n{good_ini}INI\ncd /app && python3 service.py --check\n")
    hidden: dict[str, str] = {}
    if level >= 4:
        instruction += textwrap.dedent(f"""
            The other services' configs break the same ways. Write the repair as a program:
            `python3 {PROGRAM} IN OUT` must write to `OUT` the repaired version of the broken
            config file `IN` (same service, same `SCHEMA`; any values, lines ending in `\\n`
            or `\\r\\n`). The tests run it on broken configs you do not see.
            """)
        want: dict[str, dict[str, Any]] = {}
        for i in range(3):
            other = {sk: rng.choice(g.POOL[sk[0]][sk[1]][1]) for sk in values}
            _, text, _ = broken_config(g, rng, service, sections, schema, other, level)
            name = f"hidden_{i}.ini"
            hidden[name] = text.replace("\n", "\r\n") if i == 2 else text
            want[name] = expected_values(other)
        tests += PROGRAM_TESTS.format(hidden=json_dumps(want), program=PROGRAM)
        source = fill_program(program_source(__file__), {"ini": f"/app/config/{ini}"})
        solution = solve_sh(f"cat > {PROGRAM} <<'PY'\n{source}PY\ncd /app && python3 {PROGRAM}\n")
    files = task_files(case, g.NAME, g.CATEGORY, g.TAGS, instruction, solution, tests, app=app, hidden=hidden)
    params = {
        "level": level,
        "service": service,
        "ini": ini,
        "sections": len(sections),
        **info,
        "leak_hint": None,
        "stale_output": None,
        "output_path": f"/app/config/{ini}",
    }
    return TaskDraft(name=task_name(g.NAME, rng, f"{service}-l{level}"), family=g.NAME, files=files, params=params)


def json_dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
