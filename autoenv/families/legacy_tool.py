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
import datetime
import functools
import inspect
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
from typing import TYPE_CHECKING, Any, NamedTuple

from autoenv.errors import MachineError
from autoenv.families.base import TaskDraft, dockerfile, pytest_test_sh, solve_sh, task_name, task_toml
from autoenv.families.legacy_search import builds_matching
from autoenv.families.legacy_texts import COMPARE_WITH_ARCHIVE, MAIN, TESTS
from autoenv.families.solver import PARAMS_MARKER, Episode, Plan, fill_program
from autoenv.grading import AGENTCALL
from autoenv.shared.actions import FinishAction, RunAction, WriteFileAction

if TYPE_CHECKING:
    from autoenv.shared.seed import SeedCase


#: Where ``legacy_main.h`` is (the command line every tool's main() begins with).
HEADERS = Path(__file__).parent


class NoCompiler(MachineError):
    """A legacy-tool level builds its tool with the host's C compiler, and there is none (or it cannot link a static
    program): this machine's fault, before any task ran."""


def tests_text(expected: Mapping[str, Any], *, replacement: str, name: str, inputs: str) -> str:
    """tests/test_outputs.py of a task that asks for a program printing what ``name`` printed for each hidden input
    (``expected``: file, status and base64 stdout by input), run as ``python3 replacement INPUT``."""
    fills = {"__EXPECTED__": repr(json.dumps(expected, sort_keys=True)), "__REPLACEMENT__": replacement,
             "__NAME__": name, "__INPUTS__": inputs}  # fmt: skip
    return re.sub("|".join(fills), lambda m: fills[m.group(0)], TESTS)


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


class ArchivedRun(NamedTuple):
    """One past run of a retired tool, as the archive level ships it (``/srv/<tool>-archive/<folder>/``)."""

    folder: str
    command: str
    #: The file it read; None when the file named did not exist.
    input: bytes | None
    stdout: bytes
    status: int


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
    def archive(self) -> str:
        """Where the archive level keeps the tool's past runs (the tool itself is gone)."""
        return f"/srv/{self.name}-archive"

    @property
    def archive_check(self) -> str:
        """The shell lines comparing the replacement with every archived run (reference solution and scripted
        solver alike)."""
        return COMPARE_WITH_ARCHIVE.format(replacement=self.replacement, archive=self.archive)

    @property
    def marker(self) -> str:
        """The phrase every instruction of the level has (recipes and ``read_level`` know the level by it)."""
        return f"the legacy `{self.name}`"

    @property
    def archive_marker(self) -> str:
        """The phrase the archive level's instruction adds to :attr:`marker`."""
        return f"the archive of `{self.name}`'s runs"

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

    def template(self) -> str:
        """The replacement with its parameters line (:data:`~autoenv.families.solver.PARAMS_MARKER`) still blank:
        the family's ``report(data) -> (stdout, status)`` and the command line every such tool has (:data:`MAIN`)."""
        main = MAIN.format(name=self.name, version=self.version, argument=self.argument)
        return self.program_text.read_text().rstrip("\n") + "\n" + main

    def program(self, params: Mapping[str, Any]) -> str:
        """The replacement for a tool built with ``params`` (reference solution and scripted solver alike)."""
        return fill_program(self.template(), dict(params))

    def expected(self, params: Mapping[str, Any], inputs: Mapping[str, bytes | None]) -> dict[str, dict[str, Any]]:
        """What the tests expect of each input: the tool's own output (base64) and status."""
        ran = self.run_each(params, inputs)
        return {
            name: {"file": None if data is None else name, "stdout": base64.b64encode(ran[name][0]).decode(),
                   "status": ran[name][1]}
            for name, data in inputs.items()
        }  # fmt: skip

    def test_sh(self, support: list[str], *, archived: bool = False) -> str:
        """The family's graded pytest run (:func:`~autoenv.families.base.pytest_test_sh`), after removing the tool
        and its licence from the grading machine (the archive level ships neither)."""
        if archived:
            return pytest_test_sh(*support)
        retire = "# the legacy tool is retired: no copy of it runs without its licence\n"
        return pytest_test_sh(*support, prepare=retire + f"rm -f {self.tool} {self.licence}\n")

    def archive_runs(
        self,
        params: Mapping[str, Any],
        inputs: Mapping[str, bytes | None],
        rng: random.Random,
        *,
        space: Mapping[str, Any],
    ) -> list[ArchivedRun]:
        """The archive level's past runs of the tool on ``inputs``, in a drawn order under dated names that do not
        tell which corner a run shows; :meth:`check_pinned` against ``space`` (each drawn parameter's values) before
        they are returned, so no archive that leaves a limit open is ever shipped."""
        ran = self.run_each(params, inputs)
        names = list(inputs)
        rng.shuffle(names)
        day, runs = rng.randrange(8000, 9000), []
        for number, name in enumerate(names, 1):
            day += rng.randint(1, 40)
            date = (datetime.date(1990, 1, 1) + datetime.timedelta(days=day)).isoformat()
            suffix = Path(name).suffix
            command = f"{self.name} /var/spool/{self.inputs}/{date}{suffix}"
            runs.append(ArchivedRun(f"run-{number:02d}", command, inputs[name], *ran[name]))
        self.check_pinned(params, space, runs)
        return runs

    def check_pinned(self, params: Mapping[str, Any], space: Mapping[str, Any], runs: list[ArchivedRun]) -> None:
        """Raise ValueError unless ``params`` is the one build in ``space`` (each drawn parameter's values) that
        prints what every archived run printed: the archive level promises its runs show each of the tool's
        limits, and this is that promise checked."""
        fixed = {k: v for k, v in params.items() if k not in space}
        shown = [(run.input, run.stdout, run.status) for run in runs if run.input is not None]
        found = builds_matching(self.template(), PARAMS_MARKER, {k: list(v) for k, v in space.items()}, fixed, shown)
        if found != [{**fixed, **{k: params[k] for k in space}}]:
            raise ValueError(
                f"{self.level} archive: {len(found)} builds print what the archive holds, not just {params}"
            )

    def archive_files(self, runs: list[ArchivedRun]) -> dict[str, str | bytes]:
        """The archive's files under ``environment/archive/`` (copied to :attr:`archive`)."""
        files: dict[str, str | bytes] = {}
        for run in runs:
            at = f"environment/archive/{run.folder}"
            files.update({f"{at}/command": run.command + "\n", f"{at}/stdout": run.stdout,
                          f"{at}/status": f"{run.status}\n"})  # fmt: skip
            if run.input is not None:
                files[f"{at}/input"] = run.input
        return files

    def archive_note(self) -> str:
        """The archive level's bullet on what is left of the tool: its archived runs, and what they show."""
        return (
            f"- `{self.name}` is gone from every machine, this one included, and no copy of it survives. What\n"
            f"  survives is {self.archive_marker}, `{self.archive}/`: one folder per run, holding `command`\n"
            "  (the command line), `input` (the file it read; absent when that file did not exist), `stdout` (what\n"
            "  it printed, byte for byte) and `status` (its exit status). Between them, the archived runs show\n"
            "  every kind of odd file named above, and each of the tool's limits.\n"
        )

    def tests_text(self, expected: Mapping[str, Any]) -> str:
        return tests_text(expected, replacement=self.replacement, name=self.name, inputs=self.inputs)

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
        archive: list[ArchivedRun] | None = None,
    ) -> dict[str, str | bytes]:
        """The task's files: the tool and its licence in the image (or, given ``archive``, the tool's past runs
        instead: :meth:`archive_runs`), ``sample`` at ``sample_path`` (under /app), ``hidden`` inputs beside the
        tests with the tool's outputs for them and for the sample, and the reference solution writing the
        replacement."""
        name = Path(sample_path).name
        inputs = {**hidden, name: sample.encode()}
        support = sorted(n for n, data in inputs.items() if data is not None)
        write = f"cat > {self.replacement} <<'REPLACEMENT'\n" + self.program(params) + "REPLACEMENT\n"
        if archive is not None:
            image: dict[str, str | bytes] = {
                "environment/Dockerfile": dockerfile() + f"COPY archive {self.archive}\n",
                **self.archive_files(archive),
            }
            check = self.archive_check
        else:
            secret = "".join(rng.choice("0123456789abcdef") for _ in range(32))
            image = {
                "environment/Dockerfile": dockerfile()
                + f"COPY legacy/{self.name} {self.tool}\nCOPY legacy/licence {self.licence}\n",
                f"environment/legacy/{self.name}": self.build(params),
                "environment/legacy/licence": f"{self.name} {self.version} site licence {secret}\n",
            }
            check = (
                f"python3 {self.replacement} {sample_path} | cmp - <({self.name} {sample_path}) && echo same output\n"
            )
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
            **image,
            f"environment/app/{sample_path.removeprefix('/app/')}": sample,
            "solution/solve.sh": solve_sh(write + check),
            "tests/test.sh": self.test_sh(support, archived=archive is not None),
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
        """The level's task (:meth:`task_files`, given ``inputs``: instruction, params, sample_path, sample, hidden
        and, at the archive level, archive), named ``<family>-<hint>-...``; its params record the drawn numbers and
        ``record``."""
        files = self.task_files(case, family=family, category=category, tags=tags, rng=rng, **inputs)
        params = {"legacy": dict(inputs["params"]), **record, "output_path": None, "stale_output": None}
        archived = inputs.get("archive") is not None
        return TaskDraft(
            name=task_name(family, rng, hint),
            family=family,
            files=files,
            executable=set() if archived else {f"environment/legacy/{self.name}"},
            params={**params, "leak_hint": None},
        )

    def closing(self, shipped: str, installed: str, *, archived: bool) -> str:
        """The instruction's closing bullets: ``shipped`` (the start of a bullet saying what the task ships, or ""),
        how the tool's behaviour can be learned (``installed``: level 5's words saying it runs here, as that level's
        text wraps them; at the archive level, :meth:`archive_note`) and :meth:`retirement_note`."""
        if archived:
            return (f"{shipped}.\n" if shipped else "") + self.archive_note() + self.retirement_note(archived=True)
        return (f"{shipped}; " if shipped else "- ") + installed + self.retirement_note()

    def retirement_note(self, *, archived: bool = False) -> str:
        """The instruction's closing lines, the same at every legacy level."""
        if archived:
            return (
                f"- The tests run your program on other {self.inputs}, with the same kinds of odd content as the\n"
                "  archived ones. No executable binary may be left under `/app`.\n"
                "- Use the Python 3 standard library only.\n"
            )
        return (
            f"- The tests run your program on other {self.inputs}, on a machine where `{self.name}` and its licence\n"
            f"  (`{self.licence}`) are gone: your program must not run `{self.name}` or a copy of it (no executable\n"
            "  binary may be left under `/app`). It behaves as the licensed tool does here, and needs no licence\n"
            "  itself.\n"
            "- Use the Python 3 standard library only.\n"
        )

    def probe(self, body: str) -> str:
        """A probe for the scripted solver, a Python program: ``body`` (which prints ``PROBED {json}``, the
        parameters the tool was built with) after a ``run(data)`` that runs the tool on ``data`` and returns its
        output's lines and its standard error."""
        return (
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
            + "\n"
        )

    def episode(self, recipe: str, probe: str, sample_path: str = "", *, compare: str = "") -> Episode:
        """The scripted solver's turns: write ``probe`` (a Python program printing ``PROBED {json}``: the parameters
        the tool was built with) and run it, write the replacement with them, compare it with the tool on the sample
        (or run ``compare``)."""
        # the probe as a script of its own, written and then run: a solver that stops at its first file (the learned
        # policy's "rush") has investigated nothing and written no replacement, as at every other level
        script = f"/tmp/find_{self.name}_build.py"
        probed = yield Plan(
            [WriteFileAction(path=script, content=probe), RunAction(command=f"python3 {script}", timeout_sec=300)],
            "Write a script that finds what the tool was built with, and run it.",
        )
        found = re.search(r"^PROBED (\{.*\})$", probed[-1].output if probed else "", re.M)
        if not found:
            yield Plan([FinishAction(message="The probes found nothing.")], "Give up.", {"intent": "recipe_failed"})
            return
        compare = (
            compare or f"python3 {self.replacement} {sample_path} | cmp - <({self.tool} {sample_path}) && echo same"
        )
        yield Plan(
            [
                WriteFileAction(path=self.replacement, content=self.program(json.loads(found.group(1)))),
                RunAction(command=compare, timeout_sec=120),
            ],
            "Write the replacement with those numbers and compare it with the tool on the sample.",
        )
        yield Plan([FinishAction(message=f"Done ({recipe}, legacy tool).")], "Done.")

    def archive_probe(self, space: Mapping[str, Any], fixed: Mapping[str, Any]) -> str:
        """The archive level's probe (a Python program): every build in ``space`` (``fixed``: what the instruction
        told) tried on the archived runs with :func:`~autoenv.families.legacy_search.builds_matching`, printing
        ``PROBED {json}`` when exactly one build prints what the archive holds."""
        return (
            "from __future__ import annotations\n\nimport json\nimport os\n\n\n"
            + inspect.getsource(builds_matching)
            + f"\n\nARCHIVE = {self.archive!r}\nTEMPLATE = {self.template()!r}\n"
            + f"SPACE = json.loads({json.dumps({k: list(v) for k, v in space.items()})!r})\n"
            + f"FIXED = json.loads({json.dumps(dict(fixed))!r})\n"
            + "runs = []\n"
            "for run in sorted(os.listdir(ARCHIVE)):\n"
            "    at = os.path.join(ARCHIVE, run)\n"
            "    if os.path.exists(os.path.join(at, 'input')):\n"
            "        read = lambda name: open(os.path.join(at, name), 'rb').read()\n"
            "        runs.append((read('input'), read('stdout'), int(read('status'))))\n"
            f"found = builds_matching(TEMPLATE, {PARAMS_MARKER!r}, SPACE, FIXED, runs)\n"
            "print('PROBED ' + json.dumps(found[0]) if len(found) == 1 else '%d builds match' % len(found))\n"
        )

    def archive_episode(self, recipe: str, space: Mapping[str, Any], fixed: Mapping[str, Any]) -> Episode:
        """The scripted solver at the archive level: find the one build the archive fits (:meth:`archive_probe`),
        write the replacement with it, compare it with every archived run."""
        return self.episode(recipe, self.archive_probe(space, fixed), compare=self.archive_check)
