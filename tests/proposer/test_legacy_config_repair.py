"""config-repair level 5 (issue 42): the legacy `cfgnorm` binary is the specification.

The reference replacement must print what the compiled C program prints, byte for byte, with the same exit status,
on the hidden corners and on random configs; the shipped config must not show the corners (else one run of the
tool on it would tell them); the scripted solver's probes find the drawn numbers; a replacement that runs the tool,
or a copy of it, scores 0 where the tests run.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
import tomllib

import pytest

from autoenv.families.config_repair import legacy
from autoenv.families.config_repair.recipe import PROBE
from autoenv.families.registry import FAMILIES
from autoenv.shared.seed import SeedCase

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="level 5 compiles its tool with gcc")

BUILDS = [
    {"line_max": line_max, "name_len": name_len, "max_keys": max_keys}
    for line_max, name_len, max_keys in ((72, 20, 6), (80, 22, 8), (96, 24, 9), (120, 28, 12))
]
SAMPLE = '[server]\nhost = 10.0.0.1\nport = 8080\ndebug = yes\n\n[queue]\nname = "orders"\nprefetch=4\n'


def case() -> SeedCase:
    return SeedCase(id="t", task="t", failure_mode="t", target_skill="t", family="config-repair")


def reference(params: dict[str, int], data: bytes) -> tuple[bytes, int]:
    """What the reference ``/app/cfgnorm.py`` prints for ``data``, and its exit status (its ``load``, run here)."""
    scope: dict = {}
    source = legacy.CFGNORM.program(params).replace('if __name__ == "__main__":', "if False:")
    exec(compile(source, "cfgnorm.py", "exec"), scope)  # noqa: S102 - the family's own reference
    out, errors = scope["load"](data)
    return out, errors % 256


def random_config(rng: random.Random) -> bytes:
    """Headers, settings and comments with odd names, values, blanks and lengths, and lines of stray bytes; few
    distinct names, so keys repeat and sections fill."""
    lines = []
    for _ in range(rng.randint(0, 220)):
        roll = rng.random()
        blank = rng.choice(["", "", " ", "\t", " \t "])
        if roll < 0.1:
            name = rng.choice(["s", "S", "srv", "", " s ", "x" * rng.randint(15, 40), "zürich", "a]b"])
            lines.append(f"{blank}[{name}{rng.choice([']', ']', '] # c', ''])}".encode())
        elif roll < 0.7:
            key = rng.choice(["k", "K", "key", "Key Two", "x" * rng.randint(15, 40), "é" * rng.randint(5, 16)])
            key += rng.choice(["", "", str(rng.randint(0, 14))])
            value = rng.choice(
                ["1", "-0", "007", "+12", "2147483648", "-2147483649", "99999999999999999999", "4294967295",
                 "yes", "ON", "False", "nope", '"q"', '"', '""', '"1"', "a # b", "v" * rng.randint(0, 150), "", "1e3"]
            )  # fmt: skip
            around = rng.choice(["=", " = ", "\t=\t", " =", "= "])
            tail = rng.choice(["", "", " ", "\t", " \t", "\r", "\r\r"])
            lines.append(f"{blank}{key}{around}{value}{tail}".encode())
        elif roll < 0.8:
            lines.append(f"{blank}{rng.choice(['#', ';'])} comment {'-' * rng.randint(0, 150)} = x".encode())
        else:
            lines.append(bytes(rng.choice(b'[]= \t#;ab\x00\r"\xff\xc3\xa9') for _ in range(rng.randint(0, 160))))
    end = rng.choice([b"\n", b"\n", b"\r\n"])
    return end.join(lines) + (end if rng.random() < 0.8 else b"")


@pytest.mark.parametrize("params", BUILDS, ids=lambda p: f"{p['line_max']}-{p['name_len']}-{p['max_keys']}")
def test_the_reference_prints_what_the_compiled_tool_prints(params):
    rng = random.Random(params["line_max"])
    configs = legacy.hidden_configs(rng, params, SAMPLE)
    configs.update({f"random-{i}": random_config(random.Random(i)) for i in range(80)})
    statuses = set()
    for name, config in configs.items():
        if config is None:
            continue
        printed, status = legacy.CFGNORM.run(params, config)
        assert reference(params, config) == (printed, status), name
        statuses.add(status)
    assert len(statuses) > 3, "the exit status is the error count, and the configs give several"
    assert legacy.CFGNORM.run(params, None) == (b"", 2), "a file that does not exist: nothing printed, status 2"


def test_the_sample_shows_no_corner_and_each_bound_shows_in_a_hidden_config():
    """A replacement without the tool's line buffer, name buffer and section limit prints the shipped config's
    output right, and fails the hidden config of each: one run of the tool on the sample cannot tell them, and the
    hidden configs do."""
    for seed in range(6):
        draft = FAMILIES["config-repair"].draft(case(), random.Random(f"measure:{seed}"), level=5)
        params, ini = draft.params["legacy"], draft.params["ini"]
        unbounded = {"line_max": 10**9, "name_len": 10**9, "max_keys": 10**9}
        sample = draft.files[f"environment/app/config/{ini}"].encode()
        assert reference(unbounded, sample) == legacy.CFGNORM.run(params, sample) == reference(params, sample)
        assert legacy.CFGNORM.run(params, sample)[1] == 0, "the shipped config has no error"
        bounds = {"long_lines.ini": "line_max", "long_names.ini": "name_len", "full_section.ini": "max_keys"}
        for name, bound in bounds.items():
            config = draft.files[f"tests/{name}"]
            one_off = {**params, bound: 10**9}
            assert reference(one_off, config) != legacy.CFGNORM.run(params, config), (name, bound)
        instruction = draft.files["instruction.md"]
        assert legacy.CFGNORM.marker in instruction and legacy.CFGNORM.tool in instruction
        told = [draft.files[path] for path in ("instruction.md", "tests/test.sh", "tests/test_outputs.py")]
        assert not [
            word
            for word in ("line_max", "name_len", "max_keys", "LINE_MAX", "NAME_LEN", "MAX_KEYS")
            for text in told
            if word in text
        ]
        assert tomllib.loads(draft.files["task.toml"])["agent"]["timeout_sec"] == 900.0


def test_the_probes_find_the_numbers_the_tool_was_built_with(tmp_path):
    """The scripted solver's PROBE, run against each build where the task installs it, reads back its numbers."""
    for params in BUILDS:
        tool = tmp_path / "cfgnorm"
        tool.write_bytes(legacy.CFGNORM.build(params, licence=False))
        tool.chmod(0o755)
        probe = PROBE.replace(legacy.CFGNORM.tool, str(tool))
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
        found = re.search(r"^PROBED (\{.*\})$", done.stdout, re.M)
        assert found and json.loads(found.group(1)) == params, done.stdout
