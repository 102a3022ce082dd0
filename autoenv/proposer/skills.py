"""The proposer's default skills: the markdown files a new workspace's ``skills/`` starts with.

A proposer reads them in its brief and may rewrite them (a workspace keeps its own edits; these are written only
where a file is missing). ``difficulty-axes.md`` is made from the families' ladder axes
(:data:`autoenv.families.levels.AXES`), one small example each, so the skill and the ladders name the same axes.
"""

from __future__ import annotations

from autoenv.families.levels import AXES

SKILLS: dict[str, str] = {
    "writing-tasks.md": """\
# Writing a task from a seed case

1. Read `seed_case.yaml`: what the base agent failed at (`failure_mode`) and the skill to train
   (`target_skill`). The new task must exercise that skill, on new data, with a new twist.
2. Generate the data with a script and a fixed random seed; compute the expected results with
   the same script and put them only in `tests/` (never in `instruction.md` or `environment/`).
3. Specify everything the tests check: file names, formats, rounding, sort orders, tie-breaks.
   A solver must be able to pass from the instruction alone.
4. Write `solution/solve.sh` as a real solution (it computes, it does not paste the answers).
5. Protect inputs with a sha256 check in the tests, so editing the data is not a way out.
6. Have it judged: validation, then calibration with the current solver (the brief says how, with how many
   rollouts, and how many rounds of each kind you have).
""",
    "writing-tests.md": """\
# Writing tests that cannot be gamed

- Check content and behaviour, not existence: compare values (with a stated tolerance),
  run the agent's program on inputs it has never seen (ship them in `tests/`).
- `tests/test.sh` must write `/logs/verifier/reward.txt` on every path: never `set -e` before
  the reward line; write 0 when anything fails.
- Grade in a fresh sandbox: `environment_mode = "separate"` under `[verifier]` and
  `artifacts = ["/app"]` at the top of task.toml. The tests then run in a new sandbox made from
  the image with the agent's `/app` copied in: no process the agent left running, no program it
  planted on PATH or in site-packages, can touch the reward.
- When the tests run a program or module the agent wrote, run it through `tests/agentcall.py`
  (`run_agent([...])`, `agent_module(...)`: as nobody, never as the tests' own user, which can read the
  expected values), hand it inputs in `agent_folder(...)` (never a path next to the tests), and compare
  plain data: `assert mod.is_valid(x) is True`, not `assert mod.is_valid(x)` (an object of the agent's
  has no truth value in the tests). A bash verifier runs it with `setpriv --reuid=65534 ...`.
- Hidden expected data belongs in `tests/`; `tests/` is uploaded only after the agent finishes.
- Without Python in the image (a skill on its own: awk, sed, sort), write the verifier in bash/awk.
""",
    "fixing-feedback.md": """\
# Reading validation feedback

Feedback comes as sections `[check] message`. What each usually means:

- `[oracle]` FileNotFoundError for an input: the Dockerfile does not `COPY app/ /app/`.
  `missing /app/X` while the solution writes elsewhere: the solution's output path is wrong.
- `[nop]` "does nothing gets reward 1": the expected output ships in `environment/app/`; delete it.
  "instead of writing reward 0": `tests/test.sh` stops before writing the reward (`set -e`).
- `[leakage]` answer_in_instruction: remove the sentence that states expected values.
  *_in_image: a test or solution file is copied into the image; delete it from `environment/`.
- `[tamper]` the reward was forged: grade in a fresh sandbox (`environment_mode = "separate"`,
  `artifacts = ["/app"]`); check content, not existence.
- `[timeouts]` raise `[agent].timeout_sec` / `[verifier].timeout_sec` or make the solution faster.

Calibration: "too easy" (every rollout passed) or "too hard" (none did) means the task does not
teach the current solver; write a new variant (different data, a harder or easier twist). Each verdict
lists, per rollout, the solver's reward, its turns, its commands and where it stopped (also kept in
memory/solver/<task>.md): aim at what it did not do or got wrong, along one of the axes in
difficulty-axes.md, rather than by making the instruction longer.
"inconclusive" means the calibration solver did not try at all (it has no way to do tasks of this kind): it
says nothing about difficulty, so do not make the task easier for it.
""",
    "families.md": """\
# Task families that have worked

- bugfix: a helper module with one realistic bug; tests compare with a reference on many inputs.
- csv-stat: grouped statistic over messy CSV rows (invalid values, inconsistent group names).
- log-parse: summarise a log with malformed lines into JSON (exact line grammar, optional time window).
- config-repair: hand-edited INI file the launcher rejects; keep every intended value.
- text-classification: standard-library classifier to an accuracy target within a time budget.
- primer-tm: primer melting temperatures (Wallace / GC formulas), sometimes with no Python in the image.
- mlp-rebuild: re-implement a small network's forward pass from exported JSON weights.
- shell-script: a bash tool over directory trees, tested on fresh trees with awkward names.
""",
}

#: One small example per difficulty axis (:data:`autoenv.families.levels.AXES`): what a task on that axis holds.
AXIS_EXAMPLES: dict[str, str] = {
    "less_told": 'the instruction says "summarise the access log into report.json like the sample"; the field '
    "order, the timestamp format and the rule for malformed lines are in `/app/sample/report.json` and in the "
    "comments of `/app/logfmt.conf`, not in the instruction.",
    "hidden_cases": "the shipped `data.csv` has 40 clean rows; the tests run the solver's `stats.py` on unseen files "
    "from the same generator with an empty group, a unicode group name, a tie for the top value and a row with a "
    "missing field (ship them in `tests/`, never in the image).",
    "composition": "`report.py` crashes with a KeyError that points at `config.py`, but the cause is a date parser "
    "in `util.py` that drops the time zone; fixing it exposes a second bug in the aggregation; one file named "
    "`legacy_fix.py` is a red herring that changes nothing.",
    "scale": "the input is a 2-million-line log (generated in the Dockerfile from a seed, not shipped); the tests "
    "give the solver's program 5 s and 256 MB, so a quadratic join or reading it all into a list fails.",
    "friction": "`python3` in the image is a stub that prints a deprecation error, so the solver must use "
    "`mawk` (not gawk: no `strftime`); or the package it needs is in `/opt/wheels` (an offline mirror) and pip's "
    "config points at an index that does not resolve.",
}


def _axes_skill() -> str:
    """The difficulty-axes skill, one section per axis of the families' ladders, from the axes themselves."""
    parts = [
        "# Making a task harder: the axes\n",
        "A careful model passes a fully specified task however long its spec: difficulty comes from what the "
        "environment holds, not from the length of the instruction. The bundled families climb along these axes "
        "(a level is a set of them, recorded in task.toml's `[metadata]` as `level` and `level_axes`); combine "
        'one or two when calibration says "too easy", and step back on one when it says "too hard". Keep '
        "the task fair: everything the tests check must be findable by the solver, in the instruction or in "
        "the environment.\n",
    ]
    for axis, meaning in AXES.items():
        parts.append(f"## {axis}\n\n{meaning[:1].upper()}{meaning[1:]}.\n\nExample: {AXIS_EXAMPLES[axis]}\n")
    return "\n".join(parts)


SKILLS["difficulty-axes.md"] = _axes_skill()
