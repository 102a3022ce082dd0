"""Pack a load balancer's log into a space it does not fit in without modelling it (an experiment, not a level): can a
bound the solver measures for itself, met only by finding the structure in the data, make a task hard?

bench/README's "a capable model packing a log into a bound" measured a capable model on these tasks. The image holds
`/var/log/lb/access.log` (40,000 lines, about 7.8 MB; `bench/log_pack/gen.py` says what structure it has, none of it
told to the solver). The solver writes `/app/access.pack` and `/app/unpack.py`; the tests remove the log and every
other file of /app, run `python3 /app/unpack.py /app/access.pack` as nobody and compare its output with the log, and
require the two files to fit in the bound: the reference solution's size (`bench/log_pack/pack.py` and `unpack.py`:
per-field prediction through an adaptive binary range coder, about 5.7 bytes a line), rounded up to a thousand bytes.
For scale: `xz -9e` makes about 15.8 bytes a line, each field as its own column of text through xz about 11.3, each
field's prediction residue as its own LZMA stream about 7.6 (this script's first reference, which the bound was 2%
above when the first three players measured it). Check a written task with ``autoenv validate DIR``.

Run: .venv/bin/python bench/log_pack_task.py [--tasks N] [--out DIR]
"""

from __future__ import annotations

import argparse
import lzma
import math
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autoenv.families.base import dockerfile, pytest_test_sh, solve_sh, task_toml, write_files  # noqa: E402
from autoenv.grading import AGENTCALL  # noqa: E402
from bench.log_pack.gen import access_log  # noqa: E402
from bench.log_pack.pack import pack  # noqa: E402

HERE = Path(__file__).resolve().parent / "log_pack"
LINES = 40_000
INSTRUCTION = """\
# Archive the load balancer's log on the old archive node

Yesterday's access log of the load balancer, `/var/log/lb/access.log` ({size:,} bytes), has to be kept on the old
archive node, which has exactly **{limit:,} bytes** free and nothing else to give: no compression tools, only a
`python3` like this machine's (Python 3.12, standard library only). What goes there is two files, and both count:

- `/app/access.pack`, the archive;
- `/app/unpack.py`, the program that gives the log back: `python3 /app/unpack.py /app/access.pack` writes the log to
  standard output, byte for byte, and exits with status 0 within 60 seconds.

Write both into `/app`. The tests check them as the archive node will: `/app` holds those two files and nothing
else, the log is gone, `unpack.py` reads `/app/access.pack` and no other file and runs as an unprivileged user with
1 CPU and 2 GB of memory, and its output must be the log exactly. The two files together must be at most {limit:,}
bytes.
"""


def log_pack(seed: str, out: Path) -> tuple[Path, int]:
    """The task of draw ``seed`` in ``out`` (replaced if it exists), and its bound."""
    shutil.rmtree(out, ignore_errors=True)
    log = access_log(seed, LINES)
    unpack = (HERE / "unpack.py").read_text()
    limit = math.ceil((len(pack(log)) + len(unpack.encode())) / 1000) * 1000
    packer = (HERE / "pack.py").read_text()
    check = "python3 /app/unpack.py /app/access.pack | cmp - /var/log/lb/access.log\n"
    files: dict[str, str | bytes] = {
        "instruction.md": INSTRUCTION.format(size=len(log), limit=limit),
        "task.toml": task_toml(
            family="log-parse",
            seed_case="bench",
            category="data-processing",
            tags=["python", "logs", "compression"],
            difficulty="hard",
            agent_timeout=3600.0,
            verifier_timeout=300.0,
        ),  # fmt: skip
        "environment/Dockerfile": dockerfile(copy_app=False, run=["mkdir -p /var/log/lb"])
        + "COPY access.log /var/log/lb/access.log\n",
        "environment/access.log": log,
        "solution/solve.sh": solve_sh(
            f"cat > /tmp/pack.py <<'PACK'\n{packer}PACK\ncat > /app/unpack.py <<'UNPACK'\n{unpack}UNPACK\n"
            "PYTHONDONTWRITEBYTECODE=1 python3 /tmp/pack.py /var/log/lb/access.log /app/access.pack\n" + check
        ),
        "tests/test.sh": pytest_test_sh(
            "access.log.xz",
            prepare="# the archive node: the two files and nothing else of /app, and no log\n"
            "rm -f /var/log/lb/access.log\n"
            "find /app -mindepth 1 -maxdepth 1 ! -name access.pack ! -name unpack.py -exec rm -rf {} +\n",
        ),
        "tests/test_outputs.py": (HERE / "test_outputs.py").read_text().replace("__LIMIT__", str(limit)),
        "tests/agentcall.py": AGENTCALL,
        "tests/access.log.xz": lzma.compress(log, preset=6),
    }
    write_files(out, files, executable={"solution/solve.sh", "tests/test.sh"})
    return out, limit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3, help="draws log-pack-0 .. N-1")
    parser.add_argument("--out", type=Path, default=Path("runs/log-pack"))
    args = parser.parse_args()
    for n in range(args.tasks):
        task, limit = log_pack(str(n), args.out / f"log-pack-{n}")
        print(f"{task}: at most {limit:,} bytes")


if __name__ == "__main__":
    main()
