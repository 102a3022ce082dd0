"""Propose tasks from a seed case with one of three methods, through the same validation.

- ``prompt``: one authoring step writes the whole task (one model call, or
  one template draft); it is judged as it is.
- ``feedback``: the same first draft, then up to ``max_rounds`` - 1 rounds in
  which the validator's feedback goes back to the author, who edits the task,
  and it is judged again. A valid task that calibration rejects (too easy or
  too hard) is rewritten as a new variant.
- ``agentic``: the author is a terminal agent in its own sandbox with the
  workspace, validating and solving its drafts in child sandboxes
  (:mod:`autoenv.proposer.agentic`).
- ``evolve``: the draft is a harder variant of a given task (``options.parent``,
  :mod:`autoenv.proposer.evolve`), then the feedback method's rounds; the
  attempt records its parent.

Every attempt ends with :func:`autoenv.validate.judge.judge_task` (validation,
calibration, r_P). Accepted tasks are copied to ``out_dir``; rejected ones to
``out_dir/rejected/<name>`` with a ``REJECTED.md`` that says why, and every
attempt is appended to the workspace's memory.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autoenv.errors import Fault, explain
from autoenv.families.base import slug
from autoenv.proposer.actions import ActionLog
from autoenv.proposer.episode import ProposerEpisode, ScriptedEpisode, from_trajectory, read_task_files
from autoenv.proposer.evolve import Evolution
from autoenv.proposer.fixer import repair
from autoenv.proposer.models import AttemptRecord, ProposeOptions, ProposeSummary, SeedCase
from autoenv.proposer.scripted import ScriptedProposer, write_draft
from autoenv.proposer.workspace import Workspace, copy_task
from autoenv.taskfmt.hashing import count_files, task_hash
from autoenv.validate.judge import Judgement, JudgeSettings, judge_task
from autoenv.vocab import Method, ProposerPolicy

REJECTED_DIR = "rejected"

#: The methods that go on after a verdict: repair an invalid draft, rewrite one calibration rejected.
REVISING = (Method.FEEDBACK, Method.EVOLVE)

Event = Callable[[str, dict[str, Any]], None]


@dataclass
class AttemptContext:
    """What one attempt works with: the seed case, the workspace, the options and where it records."""

    case: SeedCase
    ws: Workspace
    attempt: int
    options: ProposeOptions
    log: ActionLog
    settings: JudgeSettings
    emit: Event
    episodes: list[ProposerEpisode]

    def unpack(self) -> tuple:
        return self.case, self.ws, self.attempt, self.options.method, self.log, self.settings, self.emit, self.episodes


def _noop(_event: str, _data: dict[str, Any]) -> None:
    pass


async def propose_async(
    case: SeedCase, options: ProposeOptions, *, out_dir: Path, workspace: Path, on_event: Event | None = None
) -> ProposeSummary:
    """Run ``options.attempts`` attempts on ``case``; accepted tasks land in ``out_dir``.

    ``options`` arrive whole and validated (the CLI and the flywheel build one :class:`ProposeOptions`); the judge
    gets its :class:`JudgeSettings` from them, never a dict of their fields.
    """
    o = options
    method, policy, attempts, env, rollouts, seed = o.method, o.policy, o.attempts, o.env, o.rollouts, o.seed
    model, proposer_table, solver = o.model, o.proposer_table, o.solver_spec
    emit = on_event or _noop
    started = time.monotonic()
    ws = Workspace(workspace).init()
    ws.set_seed_case(case)
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    trials_dir = ws.root / ".trials"
    settings = JudgeSettings(
        validation=o.validation,
        solver=solver,
        rollouts=rollouts,
        seed=seed,
        trials_dir=trials_dir,
        accept_undetermined=o.accept_undetermined,
    )
    table = None
    if proposer_table is not None:
        from autoenv.agents.policies.learned import PolicyTable

        table = PolicyTable.load(proposer_table)
    proposer_name = "scripted" if policy == ProposerPolicy.SCRIPTED else f"openai:{model}"
    # the parent is read, and the scripted proposer's climb checked, before any attempt
    evolution = Evolution.plan(o) if method == Method.EVOLVE else None

    records: list[AttemptRecord] = []
    for attempt in range(attempts):
        emit("attempt", {"seed_case": case.id, "method": method, "attempt": attempt, "of": attempts})
        log = ActionLog()
        family: str | None = None
        params: dict[str, Any] = {}
        repairs: list[str] = []
        verdict: Judgement | None = None
        task_dir: Path | None = None
        rounds = 0
        error: str | None = None
        episodes: list[ProposerEpisode] = []
        context = AttemptContext(case, ws, attempt, o, log, settings, emit, episodes)
        try:
            if method == Method.AGENTIC:
                from autoenv.proposer.agentic import run_agentic

                outcome = await run_agentic(
                    case,
                    ws,
                    attempt=attempt,
                    options=o,
                    trials_dir=trials_dir,
                    mask_paths=[out_dir],
                    since=log.wall_started,
                )
                log.extend(outcome.actions)
                repairs = outcome.repairs
                task_dir = outcome.task_dir
                rounds = max(1, outcome.rounds)
                error = outcome.error
                trajectory = Path(outcome.trial_dir) / "agent" / "trajectory.json" if outcome.trial_dir else None
                if trajectory is not None and trajectory.is_file():
                    episodes.append(from_trajectory(trajectory))
                if task_dir is not None:
                    verdict = await _judge(task_dir, log, settings, emit, rounds)
            elif policy == ProposerPolicy.SCRIPTED:
                task_dir, verdict, rounds, family, params, repairs = await _scripted_attempt(context, table, evolution)
            else:
                task_dir, verdict, rounds, repairs = await _model_attempt(context, evolution)
        except Exception as exc:
            # A task the proposer wrote badly is a rejected attempt with its reason (r_P = 0 is its score).
            # A model endpoint, sandbox or backend failure, or a bug of ours, says nothing about the
            # proposer: scoring it would put a zero into its GRPO group, so the run stops instead.
            if explain(exc, task=task_dir, env=env).kind is not Fault.TASK:
                raise
            error = f"{type(exc).__name__}: {exc}"
        record = _record(case, method, proposer_name, attempt, task_dir, verdict, rounds, log, error)
        if evolution is not None:
            record.parent_name, record.parent_hash = evolution.parent.name, evolution.parent.hash
        if episodes:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            record.episode_path = str(
                episodes[-1].save(
                    ws.root / ".proposer" / "episodes" / f"{slug(case.id, 40)}-s{seed}-a{attempt}-{stamp}.json"
                )
            )
        if record.accepted and task_dir is not None:
            accepted = copy_task(task_dir, out_dir)
            record.task_dir = str(accepted)
        elif task_dir is not None and task_dir.is_dir():
            _keep_rejected(task_dir, out_dir / REJECTED_DIR, record)
        ws.remember(
            record,
            family=family or _family_of(task_dir),
            params=params,
            repairs=repairs,
            feedback=verdict.feedback() if verdict else None,
        )
        records.append(record)
        emit(
            "attempt_done",
            {
                "attempt": attempt,
                "accepted": record.accepted,
                "valid": record.valid,
                "reason": record.reason,
                "task": Path(record.task_dir).name if record.task_dir else None,
                "reward": record.reward,
            },
        )

    accepted = [r for r in records if r.accepted]
    return ProposeSummary(
        seed_case=case.id,
        method=method,
        proposer=proposer_name,
        attempts=len(records),
        valid=sum(r.valid for r in records),
        calibrated=sum(r.calibrated for r in records),
        accepted_tasks=[r.task_dir for r in accepted if r.task_dir],
        files_per_accepted=[r.n_files or 0 for r in accepted],
        duration_sec=round(time.monotonic() - started, 3),
        records=records,
    )


def propose(
    case: SeedCase,
    options: ProposeOptions | None = None,
    *,
    out_dir: Path,
    workspace: Path,
    on_event: Event | None = None,
    **fields: Any,
) -> ProposeSummary:
    """Blocking wrapper around :func:`propose_async` for scripts and tests: ``options`` whole, or its fields as
    keywords (``method="prompt", attempts=2``), validated into one :class:`ProposeOptions` here, at the edge."""
    if options is not None and fields:
        raise TypeError(f"propose: give options or its fields, not both ({', '.join(sorted(fields))})")
    typed = options if options is not None else ProposeOptions(**fields)
    return asyncio.run(propose_async(case, typed, out_dir=out_dir, workspace=workspace, on_event=on_event))


# -- the two authored methods ---------------------------------------------------------------


async def _judge(task_dir: Path, log: ActionLog, settings: JudgeSettings, emit: Event, round_no: int) -> Judgement:
    emit("judge", {"task": task_dir.name, "round": round_no})

    def validated(report: Any) -> None:
        checks = ", ".join(f"{c.name}={c.status}" for c in report.checks)
        log.add(
            "Test",
            f"validate tasks/{task_dir.name} in child sandboxes: {'valid' if report.valid else 'invalid'} ({checks})",
        )
        if report.valid:
            emit("calibrate", {"task": task_dir.name, "round": round_no})

    verdict = await judge_task(task_dir, settings, on_validated=validated)
    if verdict.calibration is not None:
        log.add(
            "Test",
            f"solve tasks/{task_dir.name} -k {verdict.calibration.settings.rollouts}: {verdict.calibration.verdict}",
        )
    return verdict


async def _scripted_attempt(a: AttemptContext, table: Any = None, evolution: Evolution | None = None):
    case, ws, attempt, method, log, settings, emit, episodes = a.unpack()
    seed, flaw_rate, max_rounds = a.options.seed, a.options.flaw_rate, a.options.max_rounds
    from autoenv.proposer.llm import brief, solver_report

    if evolution is not None:
        proposer = evolution.proposer(seed=seed, flaw_rate=flaw_rate, workspace=ws)
        log.add("Read", f"task {evolution.parent.name} ({evolution.parent.path}): {proposer.describe()}")
    else:
        proposer = ScriptedProposer(seed=seed, flaw_rate=flaw_rate, workspace=ws, table=table, level=a.options.level)
        log.add("Read", f"seed case {case.id}: {case.failure_mode[:200]}")
    log.add("Read", "FORMAT.md, skills/*.md, memory/lessons.md")
    family = proposer.family(case)
    draft = proposer.draft(case, attempt)
    decisions = list(proposer.last_decisions)
    if evolution is not None:
        instruction = evolution.brief(ws, draft.name, rollouts=a.options.rollouts, max_rounds=max_rounds)
    else:
        instruction = brief(
            case, ws, draft.name, method=method, rollouts=settings.rollouts, max_rounds=max_rounds, repair_rounds=None
        )
    chat = ScriptedEpisode(instruction, draft.name)
    log.add("Build", f"template {family.name}: generated data, target and expected results ({draft.summary()[:300]})")
    task_dir = write_draft(draft, ws.tasks)
    chat.write(read_task_files(task_dir), note=f"A {family.name} task: {draft.summary()[:300]}")
    episodes[:] = [chat.episode().model_copy(update={"decisions": decisions})]
    log.add("Write", f"wrote {len(draft.files)} files to tasks/{draft.name}")
    rounds = 1
    verdict = await _judge(task_dir, log, settings, emit, rounds)
    _climb(proposer, family, draft, verdict, log)
    repairs: list[str] = []
    variant = 0
    while method in REVISING and not verdict.accepted and rounds < max_rounds:
        feedback = verdict.feedback()
        log.add("Read", f"feedback: {feedback.splitlines()[0][:200]}")
        chat.feedback("\n\n".join(filter(None, [feedback, solver_report(verdict.calibration)])))
        if not verdict.valid:
            before = read_task_files(task_dir)
            fixes = repair(task_dir, feedback)
            if not fixes:
                log.add("Read", "no repair matches the feedback; giving up on this draft")
                break
            for fix in fixes:
                log.add("Write", f"repair {fix}")
            repairs += [str(f) for f in fixes]
            after = read_task_files(task_dir)
            chat.write(
                {rel: data for rel, data in after.items() if before.get(rel) != data},
                sorted(set(before) - set(after)),
                note="Repair what the feedback names: " + "; ".join(str(f) for f in fixes),
            )
        else:  # valid, but the solver passed always or never: write a different variant
            variant += 1
            draft = proposer.draft(case, attempt, variant=variant, allow_flaw=False)
            log.add(
                "Build",
                f"new variant after '{verdict.calibration.verdict if verdict.calibration else ''}': "
                f"{draft.summary()[:200]}",
            )
            task_dir = write_draft(draft, ws.tasks)
            log.add("Write", f"wrote {len(draft.files)} files to tasks/{draft.name}")
            chat.write(read_task_files(task_dir), note=f"A different variant: {draft.summary()[:300]}")
        episodes[:] = [chat.episode().model_copy(update={"decisions": decisions})]
        rounds += 1
        verdict = await _judge(task_dir, log, settings, emit, rounds)
        _climb(proposer, family, draft, verdict, log)
    return task_dir, verdict, rounds, family.name, dict(draft.params), repairs


def _climb(proposer: ScriptedProposer, family: Any, draft: Any, verdict: Judgement, log: ActionLog) -> None:
    """Feed a conclusive calibration to the proposer's level (too easy: up, too hard: down)."""
    calibration = verdict.calibration
    if not verdict.valid or calibration is None or calibration.inconclusive:
        return
    level = draft.params.get("ladder_level")
    after = proposer.observe(family, level, calibration.pass_rate)
    if level is not None and calibration.pass_rate in (0.0, 1.0) and after != level:
        log.add("Read", f"calibration {calibration.verdict}: {family.name} level {level} -> {after}")


async def _model_attempt(a: AttemptContext, evolution: Evolution | None = None):
    case, ws, attempt, method, log, settings, emit, episodes = a.unpack()
    o = a.options
    from autoenv.proposer.llm import ModelTaskWriter, apply_files, brief, model_feedback, solver_report

    name = evolution.model_name(attempt) if evolution is not None else f"{slug(case.id, 20)}-s{o.seed}-a{attempt}"
    task_dir = ws.tasks / name
    writer = ModelTaskWriter(model=o.model, base_url=o.base_url, seed=o.seed * 1000 + attempt)
    try:
        log.add("Read", f"seed case {case.id}, FORMAT.md, skills, lessons (in the prompt)")
        if evolution is not None:
            log.add("Read", f"task {evolution.parent.name}'s files (in the prompt)")
            text = evolution.brief(ws, name, rollouts=o.rollouts, max_rounds=o.max_rounds)
        else:
            text = brief(
                case,
                ws,
                name,
                method=method,
                rollouts=o.rollouts,
                max_rounds=o.max_rounds,
                repair_rounds=o.repair_rounds,
            )
        files, deletions = await writer.draft(text, name)
        if task_dir.exists():
            shutil.rmtree(task_dir)
        apply_files(task_dir, files, deletions, log)
        rounds = 1

        async def judged() -> Judgement:
            verdict = await _judge(task_dir, log, settings, emit, rounds)
            if verdict.valid and verdict.calibration is not None:  # the workspace keeps what the solver did
                ws.solver_runs(name, solver_report(verdict.calibration))
            return verdict

        verdict = await judged()
        repairs: list[str] = []
        # two budgets (issue 42): repairing validity does not cost a difficulty round, and the reverse
        repairs_left, variants_left = o.repair_rounds, o.max_rounds - 1
        while method in REVISING and not verdict.accepted:
            if verdict.valid and variants_left > 0:
                variants_left -= 1
            elif not verdict.valid and repairs_left > 0:
                repairs_left -= 1
            else:
                log.add("Read", f"no {'difficulty' if verdict.valid else 'repair'} round left: {verdict.reason()}")
                break
            feedback = model_feedback(verdict, repairs_left=repairs_left, variants_left=variants_left)
            log.add("Read", f"feedback: {feedback.splitlines()[0][:200]}")
            files, deletions = await writer.revise(feedback, name)
            if not files and not deletions:
                log.add("Read", "the model changed nothing; stopping")
                break
            apply_files(task_dir, files, deletions, log)
            repairs.append(
                f"round {rounds}: rewrote {', '.join(sorted(files)) or '-'}; removed {', '.join(deletions) or '-'}"
            )
            rounds += 1
            verdict = await judged()
        return task_dir, verdict, rounds, repairs
    finally:
        if (episode := writer.episode()) is not None and writer.replies:
            episodes[:] = [episode]
        await writer.aclose()


# -- records ------------------------------------------------------------------------------


def _record(
    case: SeedCase,
    method: str,
    proposer: str,
    attempt: int,
    task_dir: Path | None,
    verdict: Judgement | None,
    rounds: int,
    log: ActionLog,
    error: str | None,
) -> AttemptRecord:
    record = AttemptRecord(
        seed_case=case.id,
        method=method,
        proposer=proposer,
        attempt=attempt,
        rounds=max(1, rounds),
        duration_sec=log.elapsed(),
        actions=list(log.actions),
    )
    if task_dir is not None and (task_dir / "task.toml").is_file():
        record.task_dir = str(task_dir)
        record.task_hash = task_hash(task_dir)
        record.n_files = count_files(task_dir)
    if verdict is None:
        record.reason = error or "no task was produced"
        return record
    record.valid = verdict.valid
    record.calibrated = verdict.calibrated
    record.pass_rate = verdict.pass_rate
    record.reward = verdict.reward
    record.reason = verdict.reason()
    if verdict.calibration is not None:  # always, accepted or not and whatever rounds were left (issue 42)
        record.calibration = f"K={verdict.calibration.settings.rollouts}: {verdict.calibration.verdict}"
    if error and record.reason:
        record.reason += f"\n(proposer episode: {error})"
    return record


def _keep_rejected(task_dir: Path, root: Path, record: AttemptRecord) -> None:
    """A copy of the rejected task with the reason next to it (the workspace keeps the original)."""
    root.mkdir(parents=True, exist_ok=True)
    kept = copy_task(task_dir, root)
    (kept / "REJECTED.md").write_text(
        f"# Rejected: {task_dir.name}\n\nseed case: {record.seed_case}; method: {record.method}; proposer: "
        f"{record.proposer}; "
        f"attempt {record.attempt}; rounds: {record.rounds}\nvalid: {record.valid}; calibrated: {record.calibrated}; "
        f"pass rate: {record.pass_rate}; r_P: {record.reward}\n\n## Reason\n\n{record.reason or '-'}\n"
    )


def _family_of(task_dir: Path | None) -> str | None:
    if task_dir is None:
        return None
    try:
        import tomllib

        return tomllib.loads((task_dir / "task.toml").read_text()).get("metadata", {}).get("family")
    except (OSError, ValueError):
        return None
