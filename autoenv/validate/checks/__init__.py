"""The validation checks: one module each, ``CHECKS`` the only list of them.

A check (:class:`~autoenv.validate.checks.base.Check`) has a name, says which trials it needs (the reference
solution, doing nothing, the adversary, the partial solution, the leak-scan copy) and judges their outcomes into a
:class:`~autoenv.validate.checks.base.CheckResult`. :func:`autoenv.validate.validation.avalidate_task` asks every
check what it needs, runs that once, and hands the outcomes to each check by name. Reports list the checks in
the order of ``CHECKS``.
"""

from __future__ import annotations

import hashlib
from importlib import import_module
from pathlib import Path

from autoenv.validate.checks.base import Check, CheckName, CheckResult, Context, Outcomes, skipped
from autoenv.validate.checks.build import check_build_from_trials, check_build_local
from autoenv.validate.checks.deterministic import check_deterministic
from autoenv.validate.checks.evidence import trial_evidence
from autoenv.validate.checks.leakage import check_leakage, warnings_count
from autoenv.validate.checks.nop import check_nop
from autoenv.validate.checks.oracle import check_oracle, missing_programs
from autoenv.validate.checks.partial import check_partial
from autoenv.validate.checks.structure import check_structure
from autoenv.validate.checks.tamper import CHEAT_ADVICE, adversary_cheats, check_tamper
from autoenv.validate.checks.timeouts import check_timeouts

#: Every check, in the order they are reported: the modules of this package, each with its ``CHECK``.
CHECKS: list[Check] = [
    import_module(f"{__name__}.{module}").CHECK
    for module in (
        "structure",
        "build",
        "solvable",
        "inputs",
        "oracle",
        "deterministic",
        "nop",
        "leakage",
        "tamper",
        "contradictions",
        "partial",
        "timeouts",
        "probes",
    )
]

#: The code that decides a verdict, relative to the ``autoenv`` package: the checks, the leak scan, the scheduler
#: and the agents whose trials the checks judge. Folders stand for every ``.py`` file in them.
VERDICT_CODE = (
    "validate/checks",
    "validate/leakage",
    "validate/validation.py",
    "validate/verdict.py",
    "agents/adversary.py",
    "agents/cheats.py",
    "agents/partial.py",
    "agents/oracle.py",
    "agents/scan.py",
    "agents/toolset.py",
    "taskfmt/inputs.py",
)


def checks_version(package_root: Path | None = None) -> str:
    """A hash of the source of :data:`VERDICT_CODE`: any change to how a verdict is reached changes it, so a
    record made by other checks is not reused (nobody has to remember to bump a number)."""
    root = Path(package_root or Path(__file__).resolve().parents[2])
    digest = hashlib.sha256()
    for entry in VERDICT_CODE:
        path = root / entry
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(file.relative_to(root).as_posix().encode() + b"\0")
            digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


#: Part of every validation record's key: records made by other checks (other code) are not reused.
CHECKS_VERSION = checks_version()

CHECK_ORDER: tuple[CheckName, ...] = tuple(c.name for c in CHECKS)
#: Checks that may end "not run" on a valid task: they say why in their summary and do not make the task invalid.
MAY_NOT_RUN: frozenset[CheckName] = frozenset(c.name for c in CHECKS if c.may_not_run)
#: The checks that need a reference solution: "not run" without one when validating with ``--no-oracle``.
NEED_ORACLE: frozenset[CheckName] = frozenset(c.name for c in CHECKS if c.needs_oracle)

__all__ = [
    "CHEAT_ADVICE",
    "CHECKS",
    "CHECKS_VERSION",
    "CHECK_ORDER",
    "VERDICT_CODE",
    "MAY_NOT_RUN",
    "NEED_ORACLE",
    "Check",
    "CheckName",
    "CheckResult",
    "Context",
    "Outcomes",
    "adversary_cheats",
    "check_build_from_trials",
    "check_build_local",
    "check_deterministic",
    "check_leakage",
    "check_nop",
    "check_oracle",
    "check_partial",
    "check_structure",
    "check_tamper",
    "check_timeouts",
    "checks_version",
    "missing_programs",
    "skipped",
    "trial_evidence",
    "warnings_count",
]
