"""``autoenv doctor``: can this machine run the chosen backend? Each prerequisite checked for real.

The backend names its probes (:meth:`autoenv.sandbox.backend.Backend.preflight`: for the local backend the
programs, root and cgroups, overlay, seccomp, runc and buildah answering, a sandbox, the stand-in base images and a
Dockerfile with a ``RUN`` step; for ``--env docker`` the daemon); the doctor runs each, then a real trial of a
one-line task under each of the backend's network modes. Each failure names what is missing and the command that
fixes it."""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from autoenv.sandbox.backend import Need, Probe
from autoenv.sandbox.backends import UnknownBackend, get_backend

__all__ = ["Check", "Diagnosis", "Need", "diagnose", "require_machine"]


class Check(BaseModel):
    """One prerequisite: what was checked, whether it holds, what was seen, and the command that fixes it."""

    name: str
    ok: bool
    need: Need = Need.REQUIRED
    detail: str = ""
    fix: str = ""
    seconds: float = 0.0


class Diagnosis(BaseModel):
    env: str
    checks: list[Check]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks if c.need is Need.REQUIRED)

    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.ok and c.need is Need.REQUIRED]

    def advice(self) -> str:
        """The failures, one line each with its fix: what a command that stopped on this machine prints."""
        return "\n".join(f"- {c.name}: {c.detail}" + (f"\n  fix: {c.fix}" if c.fix else "") for c in self.failures())


def _timed(name: str, probe: Callable[[], str | None], *, fix: str = "", need: Need = Need.REQUIRED) -> Check:
    """Run ``probe``: it returns what it saw (ok) or raises with why it failed."""
    started = time.monotonic()
    try:
        detail, ok = probe() or "", True
    except Exception as exc:  # noqa: BLE001 - a prerequisite's failure, whatever it raised, is the finding
        detail, ok = (str(exc).strip().splitlines() or [type(exc).__name__])[-1][:500], False
    return Check(name=name, ok=ok, need=need, detail=detail, fix="" if ok else fix, seconds=time.monotonic() - started)


_TASK_TOML = """schema_version = "1.4"
artifacts = ["/app"]
[verifier]
environment_mode = "separate"
timeout_sec = 60.0
[agent]
timeout_sec = 60.0
[environment]
build_timeout_sec = 300.0
cpus = 1
memory_mb = 512
network_mode = "{mode}"
"""


def _trial(mode: str, env: str) -> Callable[[], str]:
    """A real trial of a one-line task: the oracle writes a file, the verifier (another sandbox) rewards it."""

    def probe() -> str:
        from autoenv.trials.runner import run_trial

        with tempfile.TemporaryDirectory(prefix="autoenv-doctor-") as tmp:
            task = Path(tmp) / f"doctor-{mode}"
            for folder in ("environment", "solution", "tests"):
                (task / folder).mkdir(parents=True)
            (task / "task.toml").write_text(_TASK_TOML.format(mode=mode))
            (task / "instruction.md").write_text("Write the word ok to /app/out.txt.\n")
            # a base every backend the doctor knows has offline: a local stand-in, and the one docker-setup.sh loads
            (task / "environment" / "Dockerfile").write_text("FROM python:3.12-slim\nWORKDIR /app\n")
            (task / "solution" / "solve.sh").write_text("#!/bin/sh\necho ok > /app/out.txt\n")
            (task / "tests" / "test.sh").write_text(
                "#!/bin/sh\nif grep -qx ok /app/out.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n"
            )
            outcome = run_trial(task, "oracle", env=env, trials_dir=Path(tmp) / "trials")
        if outcome.error or outcome.reward != 1.0:
            raise RuntimeError(
                f"{outcome.error or 'reward ' + str(outcome.reward)}: "
                + (outcome.error_message or f"the oracle's file did not reach the verifier ({outcome.trial_dir})")
            )
        return f"oracle trial on {env} under network_mode={mode}: reward 1 in {outcome.duration_sec:.1f}s"

    return probe


def diagnose(
    env: str = "local", *, builds: bool = True, trials: bool = True, on_check: Callable[[Check], None] | None = None
) -> Diagnosis:
    """Check every prerequisite of ``env``, in the order a run would meet them: the backend's probes, then a real
    trial under each of its network modes.

    ``builds=False`` stops after the programs answering (about a second: what every command checks before it
    starts); ``trials=False`` skips the sandbox trials.
    """
    checks: list[Check] = []

    def probe(p: Probe) -> bool:
        check = _timed(p.name, p.probe, fix=p.fix, need=p.need)
        checks.append(check)
        if on_check:
            on_check(check)
        return check.ok

    backend = get_backend(env)
    if backend.preflight(probe, builds=builds) and trials:
        for mode, fix in backend.trial_modes:
            probe(Probe(f"sandbox, {mode}", _trial(mode, env), fix=fix))
    return Diagnosis(env=env, checks=checks)


def require_machine(env: str = "local") -> None:
    """Raise :class:`~autoenv.errors.MachineError` with the doctor's advice when ``env`` cannot work here.

    The cheap checks only (root, cgroups, programs, seccomp, runc and buildah answering: about a second), once
    per process: what the flywheel, ``propose``, ``validate`` and ``calibrate`` run before they start, so that a
    broken machine stops them with the fix instead of being recorded as a run of invalid tasks.
    """
    from autoenv.errors import MachineError

    if env in _machine_ok:
        return
    try:
        backend = get_backend(env)
    except UnknownBackend:
        return  # the command says so where it reads its options
    if not backend.checked_before_runs:
        return
    diagnosis = diagnose(env, builds=False, trials=False)
    if not diagnosis.ok:
        raise MachineError(f"the {backend.name} backend cannot work on this machine:\n{diagnosis.advice()}")
    _machine_ok.add(env)


_machine_ok: set[str] = set()


if __name__ == "__main__":  # pragma: no cover
    print(diagnose(sys.argv[1] if len(sys.argv) > 1 else "local").model_dump_json(indent=2))
