"""Contradictions: two tables of expected values in the tests that disagree on the same key, so no output passes.

Without a reference solution, tests that contradict each other look like a hard task: doing nothing gets 0, every
cheat gets 0, and an agent that tries gets 0 too, so nop, tamper and ``--oracle-agent`` all leave the task
"undetermined". The only way to reward 1 is to edit the tests' inputs, the worst signal a policy can learn.

The probe reads the literal tables in the tests (dict displays of constants, in test files and in the Python
heredocs of shell verifiers: :mod:`autoenv.validate.checks.testcode`) and pairs two that give different values for
the same key. It then shows the contradiction by running the verifier, with no reference solution needed:

1. each table written as the output (to every JSON output the instruction names and the tests read, the other
   table's other keys kept): neither passes;
2. the same two outputs against copies of the tests in which the *other* table is made to agree on the disputed
   keys: both pass.

So each table's output fails only because of the other table's values: no output satisfies both. The finding names
both tables (file:line) and the disputed keys. Any other outcome (an output that passes as written, or one that
still fails when the tables agree) is no contradiction, and nothing is reported. A task with a reference solution
does not need it: the ``oracle`` check shows whether a correct output passes.
"""

from __future__ import annotations

import ast
import json
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path, PurePosixPath
from typing import Any

from autoenv.agents.shortcuts import output_files
from autoenv.taskfmt.check import Level, Problem
from autoenv.taskfmt.hashing import IGNORED_PARTS
from autoenv.trials import runner
from autoenv.trials.runner import TrialOutcome
from autoenv.validate.checks.base import SECOND, Check, CheckResult, Context, Outcomes, skipped
from autoenv.validate.checks.evidence import trial_evidence
from autoenv.validate.checks.reads import in_image, test_reads
from autoenv.validate.checks.testcode import PySource, patched, python_sources

#: An agent that runs the ``solution/solve.sh`` of the task copy it is given (the probe's output writer).
WRITER = "autoenv.agents.oracle:TaskOracleAgent"
#: At most this many pairs of tables are confirmed by trials (those with the most disputed keys first).
MAX_PAIRS = 2


@dataclass(frozen=True)
class Table:
    """A dict display of constants in the tests: its values by key, and where it is."""

    source: PySource
    node: ast.Dict
    values: dict[Any, Any]
    #: the list, tuple or dict it is an element of (rows of one table are records, not rival expectations)
    parent: ast.AST | None = None

    @property
    def where(self) -> str:
        return f"{self.source.file}:{self.source.line(self.node)}"


def tables(task_dir: Path) -> list[Table]:
    """The literal tables (two keys or more, every key and value a JSON-able constant) in the tests' Python."""
    found: list[Table] = []
    for source in python_sources(task_dir):
        tree = source.tree()
        parents = {
            id(child): node
            for node in (ast.walk(tree) if tree is not None else [])
            if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict)
            for child in ast.iter_child_nodes(node)
        }
        for node in ast.walk(tree) if tree is not None else []:
            if not isinstance(node, ast.Dict) or len(node.keys) < 2 or None in node.keys:
                continue
            try:
                values = ast.literal_eval(node)
                json.dumps(values)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                continue
            if all(isinstance(k, str | int) and not isinstance(k, bool) for k in values):
                found.append(Table(source, node, values, parents.get(id(node))))
    return found


def disputed(a: Table, b: Table) -> list[Any]:
    """The keys on which two tables give different values."""
    return [k for k in a.values if k in b.values and a.values[k] != b.values[k]]


def candidate_pairs(found: list[Table]) -> list[tuple[Table, Table, list[Any]]]:
    pairs = [
        (a, b, keys)
        for a, b in combinations(found, 2)
        if (a.parent is None or a.parent is not b.parent) and (keys := disputed(a, b))
    ]
    return sorted(pairs, key=lambda p: -len(p[2]))[:MAX_PAIRS]


def json_outputs(ctx: Context) -> list[str]:
    """The JSON outputs the instruction names and the tests read (not files the image ships)."""
    reads = {r.path for r in test_reads(ctx.task_dir)}
    return [
        p for p in output_files(ctx.task.instruction) if p.endswith(".json") and p in reads and not in_image(ctx, p)
    ]


def _writer_copy(ctx: Context, root: Path, name: str, output: dict, outputs: list[str]) -> Path:
    """A copy of the task whose solution writes ``output`` to each of ``outputs``."""
    copy = root / name / ctx.task_dir.name
    shutil.copytree(ctx.task_dir, copy, ignore=shutil.ignore_patterns(*IGNORED_PARTS, "*.pyc"))
    shutil.rmtree(copy / "solution", ignore_errors=True)  # the task's own solution folder only, at its top
    text = json.dumps(output, indent=2) + "\n"
    lines = ["#!/bin/sh"] + [
        f"mkdir -p {shlex.quote(str(PurePosixPath(p).parent))} && printf '%s' {shlex.quote(text)} > {shlex.quote(p)}"
        for p in outputs
    ]
    (copy / "solution").mkdir()
    (copy / "solution" / "solve.sh").write_text("\n".join(lines) + "\n")
    (copy / "solution" / "solve.sh").chmod(0o755)
    return copy


def _agreeing(table: Table, other: Table, keys: list[Any]) -> str:
    """``table``'s code with ``other``'s values on the disputed keys."""
    return repr({k: (other.values[k] if k in keys else v) for k, v in table.values.items()})


def _passed(ctx: Context, outcome: TrialOutcome) -> bool:
    return outcome.reward is not None and outcome.reward >= ctx.threshold


async def confirm(
    ctx: Context, a: Table, b: Table, keys: list[Any], outputs: list[str], ran: list[TrialOutcome]
) -> dict[str, Any] | None:
    """The trials that show ``a`` and ``b`` contradict each other (evidence), or None where they do not; every trial
    run is added to ``ran``."""
    out_a, out_b = {**b.values, **a.values}, {**a.values, **b.values}
    with tempfile.TemporaryDirectory(prefix="autoenv-contradiction-") as tmp:
        root = Path(tmp)
        as_written = await ctx.run(
            [
                (WRITER, {"task_dir": str(_writer_copy(ctx, root, "a", out_a, outputs))}),
                (WRITER, {"task_dir": str(_writer_copy(ctx, root, "b", out_b, outputs))}),
            ]
        )
        ran += as_written
        if any(_passed(ctx, o) for o in as_written):
            return None
        agreeing = []
        for name, output, changed, other in (("a-agreed", out_a, b, a), ("b-agreed", out_b, a, b)):
            copy = _writer_copy(ctx, root, name, output, outputs)
            text = patched(ctx.task_dir, changed.source, changed.node, _agreeing(changed, other, keys))
            (copy / changed.source.file).write_text(text)
            agreeing.append((copy, WRITER, {}))
        trials_dir = Path(as_written[0].trial_dir).parent if as_written[0].trial_dir else None
        agreed = await runner.arun_many(agreeing, n_concurrent=2, env=ctx.settings.env, trials_dir=trials_dir)
        ran += agreed
    if not all(_passed(ctx, o) for o in agreed):
        return None
    return {
        "tables": [a.where, b.where],
        "keys": [str(k) for k in keys],
        "as_written": [trial_evidence(o) for o in as_written],
        "tables_agreeing": [trial_evidence(o) for o in agreed],
    }


class ContradictionsCheck(Check):
    name = "contradictions"
    stage = SECOND
    may_not_run = True  # a task with a reference solution leaves it to the oracle check

    async def judge(self, ctx: Context, outcomes: Outcomes) -> CheckResult:
        if ctx.run_oracle:  # the reference solution is the evidence either way
            oracle = ctx.results.get("oracle")
            if oracle is not None and oracle.passed:
                return CheckResult(
                    name=self.name, passed=True, summary="the reference solution passes: the tests agree"
                )
            return skipped(
                self.name, "a reference solution runs: the oracle check shows whether a correct output passes"
            )
        pairs = candidate_pairs(tables(ctx.task_dir))
        outputs = json_outputs(ctx) if pairs else []
        if not pairs or not outputs:
            why = "no two literal tables in the tests disagree on a key" if not pairs else "no JSON output to write"
            return CheckResult(name=self.name, passed=True, summary=why)
        tried, findings, evidence, ran = [], [], {}, []
        for a, b, keys in pairs:
            tried.append(f"{a.where} vs {b.where}")
            found = await confirm(ctx, a, b, keys, outputs, ran)
            if found is None:
                continue
            evidence = found
            shown = ", ".join(f"{k!r}: {a.values[k]!r} vs {b.values[k]!r}" for k in keys[:3])
            findings.append(
                Problem(
                    path=str(ctx.task_dir / a.source.file),
                    line=a.source.line(a.node),
                    rule="autoenv-contradictory-tests",
                    level=Level.ERROR,
                    message=f"the tests' table at {a.where} and the one at {b.where} expect different values for the "
                    f"same keys ({shown}): no output can pass. Each table written as {', '.join(outputs)} fails, "
                    "and each passes once the other table is made to agree (4 verifier runs)",
                    advice="decide which table is right and delete or correct the other (a known-cases table and a "
                    "rule such as 'largest coin first' must give the same answers)",
                )
            )
            break
        seconds = round(sum(o.duration_sec or 0.0 for o in ran), 3)
        if not findings:
            return CheckResult(
                seconds=seconds,
                name=self.name,
                passed=True,
                summary=f"tables that disagree ({'; '.join(tried)}) do not make the tests contradict each other: an "
                "output passes, or fails for another reason",
                evidence={"tried": tried},
            )
        return CheckResult(
            seconds=seconds,
            name=self.name,
            passed=False,
            summary=f"contradictory tests: {evidence['tables'][0]} and {evidence['tables'][1]} disagree on "
            f"{', '.join(evidence['keys'][:5])}; no output passes",
            evidence=evidence,
            feedback="\n".join(f"- {f}" for f in findings),
            findings=findings,
        )


CHECK = ContradictionsCheck()
