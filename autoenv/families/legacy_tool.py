"""Levels that retire a legacy C tool whose behaviour is the specification (log-parse 5, csv-stat 6, config-repair 5).

Such a level ships a stripped static binary built from the family's ``files/<tool>.c`` with a few numbers (and
names) drawn per task, tells nothing of what it does, and asks for a Python replacement printing the same bytes with
the same exit status for any input. What a C program does with its fixed buffers, 32-bit arithmetic and byte-wise
comparisons is found only by running it; the tests run the replacement on hidden inputs made of those corners.
This module is what the three levels share: the build, the tool's own outputs (the expected ones, from a build
without the licence check, run on this machine at generation), the task's files (the tool and its licence in the
image, a ``test.sh`` that removes both before grading, tests comparing bytes and refusing an ELF file under /app),
and the scripted solver's episode (probe the drawn numbers, write the replacement, compare it with the tool).
A family keeps what is its own: the C source, the replacement (``files/legacy_program.py``), the drawn numbers,
the sample and hidden inputs, the instruction and the probes.
"""

from __future__ import annotations

import base64
import functools
import json
import random
import re
import shutil
import subprocess
import tempfile
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autoenv.errors import MachineError
from autoenv.families.base import TaskDraft, dockerfile, pytest_test_sh, solve_sh, task_name, task_toml
from autoenv.families.solver import Episode, Plan, fill_program
from autoenv.grading import AGENTCALL
from autoenv.shared.actions import FinishAction, RunAction, WriteFileAction

if TYPE_CHECKING:
    from autoenv.shared.seed import SeedCase


#: Where ``legacy_main.h`` is (the command line every tool's main() begins with).
HEADERS = Path(__file__).parent


class NoCompiler(MachineError):
    """A legacy-tool level builds its tool with the host's C compiler, and there is none (or it cannot link a static
    program): this machine's fault, before any task ran."""


def c_string(text: str) -> str:
    """``text`` as a C string literal (for a ``-D`` name)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@functools.cache
def _compile(source: Path, flags: tuple[str, ...], what: str) -> bytes:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise NoCompiler(
            f"{what} compiles its legacy tool ({source}) with gcc, and this machine has no C compiler: "
            "bash scripts/system-deps.sh installs gcc and libc6-dev"
        )
    with tempfile.TemporaryDirectory(prefix="autoenv-legacy-") as tmp:
        out = Path(tmp) / source.stem
        argv = [compiler, "-std=c99", "-O2", "-static", "-s", f"-I{HEADERS}", *flags, "-o", str(out), str(source)]
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            problem = done.stderr.strip()[-600:]
            raise NoCompiler(f"{source} did not compile: {problem} (libc6-dev has the static C library)")
        return out.read_bytes()


@dataclass(frozen=True)
class LegacyTool:
    """One family's legacy tool ``name``: its source ``files/<name>.c`` and the replacement's text
    ``files/legacy_program.py`` in the ``files/`` folder beside the family's module (``beside``: its ``__file__``),
    written to ``/app/<name>.py``; ``macros`` maps a drawn parameter to the C name it is compiled in as (a ``str``
    value becomes a C string)."""

    name: str
    version: str
    beside: str
    macros: Mapping[str, str]
    #: What the level is called in messages ("log-parse level 5").
    level: str
    #: What the tool reads, in the tests' words ("logs", "extracts", "configs").
    inputs: str = "files"
    #: Its argument as its usage line names it ("LOG").
    argument: str = "FILE"

    @property
    def files(self) -> Path:
        return Path(self.beside).with_name("files")

    @property
    def source(self) -> Path:
        return self.files / f"{self.name}.c"

    @property
    def program_text(self) -> Path:
        return self.files / "legacy_program.py"

    @property
    def replacement(self) -> str:
        return f"/app/{self.name}.py"

    @property
    def tool(self) -> str:
        return f"/usr/local/bin/{self.name}"

    @property
    def licence(self) -> str:
        return f"/etc/{self.name}/licence"

    @property
    def marker(self) -> str:
        """The phrase every instruction of the level has (recipes and ``read_level`` know the level by it)."""
        return f"the legacy `{self.name}`"

    def build(self, params: Mapping[str, Any], *, licence: bool = True) -> bytes:
        """The tool compiled with ``params`` (static, stripped): what the task ships, or with ``licence=False`` the
        build the generator runs here to know the answers."""
        flags = [
            f"-D{macro}={c_string(v) if isinstance(v := params[key], str) else v}" for key, macro in self.macros.items()
        ]
        return _compile(self.source, (*flags, *([] if licence else ["-DNO_LICENCE"])), self.level)

    def run(self, params: Mapping[str, Any], data: bytes | None) -> tuple[bytes, int]:
        """The tool's standard output and exit status for ``data`` (None: a path that does not exist)."""
        return self.run_each(params, {"input": data})["input"]

    def run_each(self, params: Mapping[str, Any], inputs: Mapping[str, bytes | None]) -> dict[str, tuple[bytes, int]]:
        """:meth:`run` for each of ``inputs``, with the host's build written out once."""
        out = {}
        with tempfile.TemporaryDirectory(prefix="autoenv-legacy-") as tmp:
            tool = Path(tmp) / self.name
            tool.write_bytes(self.build(params, licence=False))
            tool.chmod(0o755)
            for name, data in inputs.items():
                path = Path(tmp) / ("input" if data is not None else "missing")
                if data is not None:
                    path.write_bytes(data)
                done = subprocess.run([str(tool), str(path)], capture_output=True, timeout=60)
                out[name] = (done.stdout, done.returncode)
        return out

    def program(self, params: Mapping[str, Any]) -> str:
        """The replacement for a tool built with ``params`` (reference solution and scripted solver alike): the
        family's ``report(data) -> (stdout, status)`` and the command line every such tool has (:data:`MAIN`)."""
        main = MAIN.format(name=self.name, version=self.version, argument=self.argument)
        return fill_program(self.program_text.read_text(), dict(params)).rstrip("\n") + "\n" + main

    def expected(self, params: Mapping[str, Any], inputs: Mapping[str, bytes | None]) -> dict[str, dict[str, Any]]:
        """What the tests expect of each input: the tool's own output (base64) and status."""
        ran = self.run_each(params, inputs)
        return {
            name: {"file": None if data is None else name, "stdout": base64.b64encode(ran[name][0]).decode(),
                   "status": ran[name][1]}
            for name, data in inputs.items()
        }  # fmt: skip

    def test_sh(self, support: list[str]) -> str:
        """The family's graded pytest run (:func:`~autoenv.families.base.pytest_test_sh`), after removing the tool
        and its licence from the grading machine."""
        retire = "# the legacy tool is retired: no copy of it runs without its licence\n"
        return pytest_test_sh(*support, prepare=retire + f"rm -f {self.tool} {self.licence}\n")

    def tests_text(self, expected: Mapping[str, Any]) -> str:
        fills = {"__EXPECTED__": repr(json.dumps(expected, sort_keys=True)), "__REPLACEMENT__": self.replacement,
                 "__NAME__": self.name, "__INPUTS__": self.inputs}  # fmt: skip
        return re.sub("|".join(fills), lambda m: fills[m.group(0)], TESTS)

    def task_files(
        self,
        case: SeedCase,
        *,
        family: str,
        category: str,
        tags: list[str],
        instruction: str,
        params: Mapping[str, Any],
        sample_path: str,
        sample: str,
        hidden: Mapping[str, bytes | None],
        rng: random.Random,
    ) -> dict[str, str | bytes]:
        """The task's files: the tool and its licence in the image, ``sample`` at ``sample_path`` (under /app),
        ``hidden`` inputs beside the tests with the tool's outputs for them and for the sample, and the reference
        solution writing the replacement."""
        name = Path(sample_path).name
        inputs = {**hidden, name: sample.encode()}
        support = sorted(n for n, data in inputs.items() if data is not None)
        solution = solve_sh(
            f"cat > {self.replacement} <<'REPLACEMENT'\n"
            + self.program(params)
            + "REPLACEMENT\n"
            + f"python3 {self.replacement} {sample_path} | cmp - <({self.name} {sample_path}) && echo same output\n"
        )
        secret = "".join(rng.choice("0123456789abcdef") for _ in range(32))
        return {
            "instruction.md": instruction,
            "task.toml": task_toml(
                family=family,
                seed_case=case.id,
                category=category,
                tags=tags,
                difficulty="hard",
                agent_timeout=900.0,
                verifier_timeout=300.0,
            ),  # fmt: skip
            "environment/Dockerfile": dockerfile()
            + f"COPY legacy/{self.name} {self.tool}\nCOPY legacy/licence {self.licence}\n",
            f"environment/app/{sample_path.removeprefix('/app/')}": sample,
            f"environment/legacy/{self.name}": self.build(params),
            "environment/legacy/licence": f"{self.name} {self.version} site licence {secret}\n",
            "solution/solve.sh": solution,
            "tests/test.sh": self.test_sh(support),
            "tests/test_outputs.py": self.tests_text(self.expected(params, inputs)),
            "tests/agentcall.py": AGENTCALL,
            **{f"tests/{n}": data for n, data in inputs.items() if data is not None},
        }

    def draft(
        self,
        case: SeedCase,
        rng: random.Random,
        *,
        family: str,
        category: str,
        tags: list[str],
        hint: str,
        record: Mapping[str, Any],
        **inputs: Any,
    ) -> TaskDraft:
        """The level's task (:meth:`task_files`, given ``inputs``: instruction, params, sample_path, sample, hidden),
        named ``<family>-<hint>-...``; its params record the drawn numbers and ``record``."""
        files = self.task_files(case, family=family, category=category, tags=tags, rng=rng, **inputs)
        params = {"legacy": dict(inputs["params"]), **record, "output_path": None, "stale_output": None}
        return TaskDraft(
            name=task_name(family, rng, hint),
            family=family,
            files=files,
            executable={f"environment/legacy/{self.name}"},
            params={**params, "leak_hint": None},
        )

    def retirement_note(self) -> str:
        """The instruction's closing lines, the same at every legacy level."""
        return (
            f"- The tests run your program on other {self.inputs}, on a machine where `{self.name}` and its licence\n"
            f"  (`{self.licence}`) are gone: your program must not run `{self.name}` or a copy of it (no executable\n"
            "  binary may be left under `/app`). It behaves as the licensed tool does here, and needs no licence\n"
            "  itself.\n"
            "- Use the Python 3 standard library only.\n"
        )

    def probe(self, body: str) -> str:
        """A probe for the scripted solver: the Python ``body`` (which prints ``PROBED {json}``, the parameters the
        tool was built with) after a ``run(data)`` that runs the tool on ``data`` and returns its output's lines
        and its standard error."""
        return (
            "python3 - <<'PY'\n"
            "import json, os, subprocess, tempfile\n\n\n"
            "def run(data):\n"
            "    with tempfile.NamedTemporaryFile(delete=False) as fh:\n"
            "        fh.write(data)\n"
            "    try:\n"
            f"        done = subprocess.run([{self.tool!r}, fh.name], capture_output=True)\n"
            "    finally:\n"
            "        os.unlink(fh.name)\n"
            "    return done.stdout.split(b'\\n'), done.stderr.decode(errors='replace')\n\n\n"
            + textwrap.dedent(body).strip()
            + "\nPY"
        )

    def episode(self, recipe: str, probe: str, sample_path: str) -> Episode:
        """The scripted solver's turns: run ``probe`` (it prints ``PROBED {json}``: the parameters the tool was
        built with, found by running it), write the replacement with them, compare it with the tool on the sample."""
        probed = yield Plan([RunAction(command=probe, timeout_sec=300)], "Find what the tool was built with.")
        found = re.search(r"^PROBED (\{.*\})$", probed[-1].output if probed else "", re.M)
        if not found:
            yield Plan([FinishAction(message="The probes found nothing.")], "Give up.", {"intent": "recipe_failed"})
            return
        compare = f"python3 {self.replacement} {sample_path} | cmp - <({self.tool} {sample_path}) && echo same"
        yield Plan(
            [
                WriteFileAction(path=self.replacement, content=self.program(json.loads(found.group(1)))),
                RunAction(command=compare, timeout_sec=120),
            ],
            "Write the replacement with those numbers and compare it with the tool on the sample.",
        )
        yield Plan([FinishAction(message=f"Done ({recipe}, legacy tool).")], "Done.")


#: What every replacement ends with: how C's ``fgets`` reads lines (the family's program sets ``LINE_MAX``), and the
#: command line the C tools share: ``--version``, a usage error (1), a file it cannot open (2; a folder opens and
#: reads as empty, as C's ``fopen`` does), else the family's ``report`` and its status.
MAIN = """

def chunks(data):
    \"\"\"The pieces fgets(buf, LINE_MAX) reads: through a newline, or LINE_MAX - 1 bytes, whichever comes first.\"\"\"
    at = 0
    while at < len(data):
        end = data.find(b"\\n", at, at + LINE_MAX - 1)
        stop = end + 1 if end >= 0 else min(at + LINE_MAX - 1, len(data))
        yield data[at:stop]
        at = stop


def main(argv):
    if len(argv) == 2 and argv[1] == "--version":
        sys.stdout.write("{name} {version}\\n")
        return 0
    if len(argv) != 2:
        sys.stderr.write("usage: {name} {argument}\\n")
        return 1
    try:
        with open(argv[1], "rb") as source:
            data = source.read()
    except IsADirectoryError:  # C's fopen opens a folder; its first read fails, as at the end of a file
        data = b""
    except OSError:
        sys.stderr.write("{name}: cannot open %s\\n" % argv[1])
        return 2
    stdout, status = report(data)
    sys.stdout.buffer.write(stdout)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
"""

#: The tests of every legacy level: each hidden input's bytes and status as the tool's, and no ELF file in /app.
TESTS = '''\
"""The replacement, run as nobody on __INPUTS__ the solver never saw, against the legacy tool's own output."""

import base64
import json
import os
import stat
from pathlib import Path

import pytest
from agentcall import agent_folder, run_agent  # the agent's program runs as nobody

EXPECTED = json.loads(__EXPECTED__)
HERE = Path(__file__).parent


def read_output(path, limit):
    """At most ``limit`` bytes of the file the program's output went to, never through a link, a FIFO or anything
    but a plain file the program may have put in its place."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return b""
    with os.fdopen(fd, "rb") as fh:
        return fh.read(limit) if stat.S_ISREG(os.fstat(fh.fileno()).st_mode) else b""


def run_program(data, limit):
    """stdout (bytes, at most ``limit``) and exit status of the replacement on ``data`` (None: a path that does not
    exist)."""
    work = agent_folder({"input": data} if data is not None else {}, writable=True)
    path = work / ("input" if data is not None else "missing")
    out = work / "stdout.bin"
    done = run_agent(["sh", "-c", 'exec python3 __REPLACEMENT__ "$0" > "$1"', str(path), str(out)], cwd="/app",
                     timeout=60)
    return read_output(out, limit), done.returncode


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_same_output_as_the_legacy_tool(name):
    want = EXPECTED[name]
    data = None if want["file"] is None else (HERE / name).read_bytes()
    expected = base64.b64decode(want["stdout"])
    stdout, status = run_program(data, len(expected) + 1)
    assert status == want["status"], f"{name}: exit status {status}, __NAME__ exits {want['status']}"
    assert stdout == expected, (
        f"{name}: the output differs from __NAME__'s:\\n{stdout[:1500]!r}\\n__NAME__ printed:\\n{expected[:1500]!r}"
    )


def test_no_executable_binary_is_left_in_app():
    """The tool is retired: a copy of it (or any ELF program) under /app does not count as a replacement."""
    # run as nobody, who runs the replacement: what nobody cannot read it may still execute (a binary of mode 0711)
    # or reach by name (a folder of mode 0711), so such a file or folder counts as a binary left behind
    scan = (
        "import os\\n"
        "found = []\\n"
        "unlisted = lambda error: found.append(error.filename + ' (a folder nobody can list)')\\n"
        "for root, dirs, files in os.walk('/app', onerror=unlisted):\\n"
        "    for f in files:\\n"
        "        p = os.path.join(root, f)\\n"
        "        try:\\n"
        "            if os.path.isfile(p) and not os.path.islink(p):\\n"
        "                if not os.access(p, os.R_OK):\\n"
        "                    if os.access(p, os.X_OK):\\n"
        "                        found.append(p + ' (executable, unreadable)')\\n"
        "                    continue\\n"
        "                with open(p, 'rb') as fh:\\n"
        "                    head = fh.read(4)\\n"
        "                if head == b'\\\\x7fELF':\\n"
        "                    found.append(p)\\n"
        "        except OSError:\\n"
        "            pass\\n"
        "print('\\\\n'.join(found))\\n"
    )
    done = run_agent(["python3", "-I", "-c", scan], cwd="/", text=True, timeout=60)
    assert done.returncode == 0 and not done.stdout.strip(), f"ELF programs under /app: {done.stdout.strip()}"
'''
