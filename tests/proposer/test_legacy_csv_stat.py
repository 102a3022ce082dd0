"""csv-stat level 6 (issue 42): the legacy `grpstat` binary is the specification.

The reference replacement must print what the compiled C program prints, byte for byte, on the hidden corners, on
random extracts and on thousands of numbers one by one (strtod, the float conversion and printf's %.2f); the shipped
sample must not show the corners (else one run of the tool on it would tell them); the scripted solver's probes
find what the tool was built with; a replacement that runs the tool, or a copy of it, scores 0 where the tests run.
"""

from __future__ import annotations

import json
import random
import shutil
import struct
import subprocess
import sys
import tomllib

import pytest

from autoenv.families.csv_stat import legacy, recipe
from autoenv.families.registry import FAMILIES
from autoenv.shared.seed import SeedCase

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="level 6 compiles its tool with gcc")

NAMES = {"group": "store", "value": "amount", "ok": "ok"}
BUILDS = [
    {"line_max": line_max, "name_len": name_len, "max_groups": max_groups, **NAMES}
    for line_max, name_len, max_groups in ((64, 10, 8), (80, 12, 10), (96, 14, 12), (128, 16, 16))
]
SPEC = {"domain": "sales", "group": "store", "value": "amount", "ok": "ok", "groups": ["dock", "elm", "harbor"],
        "mu_sd": (40.0, 18.0), "prefix": "SA"}  # fmt: skip
CASE = SeedCase(id="t", task="t", failure_mode="t", target_skill="t", family="csv-stat")
#: Pieces of numbers: what strtod reads, stops at or refuses.
PIECES = ["0", "1", "7", "9", "12", ".", "e", "E", "+", "-", "x", "X", "p", "a", "f", "inf", "nan", "INF", "ity",
          " ", "\t", "00", "5", "e3", "e-3", "e39", "0x", "1p", "(", ")", "_"]  # fmt: skip


def random_number(rng: random.Random) -> str:
    """A value cell: pieces glued at random, or a number near what float and %.2f round."""
    roll = rng.random()
    if roll < 0.3:
        return "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 6)))
    if roll < 0.45:  # exact binary ties at the second decimal (x.125, x.375, ...) and their neighbours
        return repr(rng.randint(-999, 99999) + rng.choice([0.125, 0.375, 0.625, 0.875, 0.005, 0.015, 0.995]))
    if roll < 0.6:
        return float.hex(rng.uniform(-1e6, 1e6) * 2.0 ** rng.randint(-140, 120))
    if roll < 0.8:  # the neighbours of float32 values, and values past its range
        bits = rng.randint(0, 0x7F7FFFFF)
        x = struct.unpack("f", struct.pack("I", bits))[0]
        return rng.choice([repr(x), f"{x:.9g}", f"{x:.17g}", f"{x * 1.0000001:.12e}", f"-{x:.6e}"])
    return f"{rng.uniform(-1e9, 1e9):.{rng.randint(0, 12)}f}"


def random_extract(rng: random.Random) -> bytes:
    """Rows with odd names, numbers, statuses and lengths, quoted commas, and lines of stray bytes."""
    lines = [rng.choice(["id,store,amount,status", "store,amount,status", "status,note,amount,id,store"]).encode()]
    if rng.random() < 0.05:
        lines[0] = rng.choice([b"", b"Store,amount,status", b"\xef\xbb\xbfstore,amount,status"])
    for _ in range(rng.randint(0, 50)):
        if rng.random() < 0.75:
            name = rng.choice(["a", "bb", "x" * rng.randint(0, 20), "zürich", "Dock", '"q,r"', " elm"])
            status = rng.choice(["ok", "ok", "OK", "ok ", "void"])
            cells = {"id": str(rng.randint(0, 99)), "store": name, "amount": random_number(rng), "status": status}
            cells["note"] = rng.choice(["", '"a, b"'])
            order = lines[0].decode(errors="replace").lstrip("\ufeff").split(",")
            text = ",".join(cells.get(c.lower(), "?") for c in order) + "," * rng.choice([0, 0, 1, 20])
            lines.append(text.encode() + b"m" * rng.choice([0, 0, rng.randint(0, 200)]))
        else:
            lines.append(bytes(rng.choice(b',.0123456789eokx\x00\r\t"a\xff') for _ in range(rng.randint(0, 150))))
    return b"\n".join(lines) + (b"\n" if rng.random() < 0.7 else b"")


@pytest.mark.parametrize("params", BUILDS, ids=lambda p: f"{p['line_max']}-{p['name_len']}-{p['max_groups']}")
def test_the_reference_prints_what_the_compiled_tool_prints(params):
    rng = random.Random(params["line_max"])
    report = legacy.reference(params)
    extracts = legacy.hidden_csvs(rng, params, SPEC)
    extracts.update({f"random-{i}": random_extract(random.Random(i)) for i in range(80)})
    for name, data in extracts.items():
        if data is None:
            continue
        assert report(data) == legacy.GRPSTAT.run(params, data), name
    assert legacy.GRPSTAT.run(params, None) == (b"", 2), "a file that does not exist: nothing printed, status 2"


def test_numbers_one_by_one_read_convert_and_print_as_c_does():
    """Thousands of value cells, each a group of its own: its mean and max print the value as the tool reads it."""
    params = BUILDS[-1]
    report = legacy.reference(params)
    rng = random.Random(7)
    for batch in range(150):
        rows = [f"g{i:02d},{random_number(rng)},ok" for i in range(params["max_groups"])]
        data = ("store,amount,status\n" + "\n".join(rows) + "\n").encode()
        assert report(data) == legacy.GRPSTAT.run(params, data), (batch, rows)


def test_the_sample_shows_no_corner_and_each_bound_shows_in_a_hidden_extract():
    """A replacement without the tool's buffers, table and float sums prints the sample's report right, and fails
    the hidden extract of each: one run of the tool on the sample cannot tell them, and the hidden extracts do."""
    draft = FAMILIES["csv-stat"].draft(CASE, random.Random("measure:0"), level=6)
    params = draft.params["legacy"]
    unbounded = {**params, "line_max": 10**9, "max_groups": 10**9}
    sample = draft.files[f"environment/app/data/{draft.params['domain']}.csv"].encode()
    assert legacy.reference(unbounded, float32=False)(sample) == legacy.GRPSTAT.run(params, sample)
    assert max(len(line) for line in sample.splitlines()) < min(legacy.CHOICES["line_max"]) - 2
    names = {line.split(b",")[1] for line in sample.splitlines()[1:]}
    assert max(len(name) for name in names) < min(legacy.CHOICES["name_len"]) - 1, "no name is cut in the sample"
    for name, bound in (("long_lines.csv", "line_max"), ("many_groups.csv", "max_groups")):
        data = draft.files[f"tests/{name}"]
        assert legacy.reference({**params, bound: unbounded[bound]})(data) != legacy.GRPSTAT.run(params, data), name
    cut = {line.split(b",")[1][: params["name_len"] - 1] for line in draft.files["tests/names.csv"].splitlines()[1:]}
    listed = legacy.GRPSTAT.run(params, draft.files["tests/names.csv"])[0].splitlines()[5:-1]
    assert len(listed) == len(cut) < len(set(draft.files["tests/names.csv"].splitlines()[1:])), "two names become one"
    for name in ("precision.csv", "numbers.csv"):  # 32-bit floats: sums that drift, values out of range
        data = draft.files[f"tests/{name}"]
        assert legacy.reference(params, float32=False)(data) != legacy.GRPSTAT.run(params, data), name
    instruction = draft.files["instruction.md"]
    assert legacy.GRPSTAT.marker in instruction and "line_max" not in instruction and "strtod" not in instruction
    assert str(params["max_groups"]) not in draft.files["tests/test.sh"]
    assert tomllib.loads(draft.files["task.toml"])["agent"]["timeout_sec"] == 900.0


def test_the_scripted_solvers_probes_find_what_the_tool_was_built_with(tmp_path):
    """The recipe's probes, run against a build of the tool (here, without its licence), find its numbers and names."""
    draft = FAMILIES["csv-stat"].draft(CASE, random.Random(11), level=6)
    params = draft.params["legacy"]
    found = recipe.RECIPE.match(draft.files["instruction.md"])
    assert found and found["legacy"] and found["data"] == f"/app/data/{draft.params['domain']}.csv"
    assert recipe.RECIPE.difficulty(draft.files["instruction.md"]) == FAMILIES["csv-stat"].level(6).skill()
    tool = tmp_path / "grpstat"
    tool.write_bytes(legacy.GRPSTAT.build(params, licence=False))
    tool.chmod(0o755)
    sample = tmp_path / "sample.csv"
    sample.write_text(draft.files[f"environment/app/data/{draft.params['domain']}.csv"])
    probe = recipe.PROBE.replace("__DATA__", repr(str(sample))).replace(legacy.GRPSTAT.tool, str(tool))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert json.loads(done.stdout.split("PROBED ", 1)[1]) == params, done.stderr[-2000:]
