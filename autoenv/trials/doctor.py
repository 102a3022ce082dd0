"""``autoenv doctor``: can this machine run the chosen backend? Each prerequisite checked for real.

A missing program does not announce itself: buildah without iptables builds nothing with a ``RUN`` step, and a
run that then records every task as "does not build" has measured the machine, not the tasks. The doctor checks
what each stage will use, by using it: the programs of the local backend (one list with the set-up script,
``sandbox/local/debian-packages.tsv``), root and cgroups, overlay, the seccomp profile, runc and buildah answering,
the stand-in base images, a one-line Dockerfile whose ``RUN`` step needs the build network, a trial started under
``no-network`` and under ``public``, and Docker when ``--env docker``. Each failure names what is missing and the
command that fixes it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from enum import StrEnum
from importlib.resources import files
from pathlib import Path

from pydantic import BaseModel

SYSTEM_DEPS = "bash scripts/system-deps.sh backend"
#: The base images the bundled tasks and the offline main job start from.
MAIN_BASES = ("debian:bookworm", "python:3.12-slim")


class Need(StrEnum):
    REQUIRED = "required"
    OPTIONAL = "optional"


class Package(BaseModel):
    """One line of ``debian-packages.tsv``: a Debian package and the program that shows it is installed."""

    package: str
    program: str
    need: Need
    why: str

    def present(self) -> bool:
        if self.program.startswith("/"):
            return Path(self.program).exists()
        return any(shutil.which(self.program, path=p) for p in (None, "/usr/sbin:/sbin:/usr/bin:/bin"))


def backend_packages() -> list[Package]:
    """The local backend's Debian packages, as ``scripts/system-deps.sh`` installs them."""
    text = files("autoenv.sandbox.local").joinpath("debian-packages.tsv").read_text()
    rows = [line.split("\t") for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return [Package(package=r[0], program=r[1], need=Need(r[2]), why=r[3]) for r in rows]


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


def _run(argv: list[str], timeout: float = 120) -> str:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd="/")
    if result.returncode != 0:
        lines = [ln for ln in (result.stderr + result.stdout).splitlines() if ln.strip()]
        raise RuntimeError(f"`{' '.join(argv)}` exited {result.returncode}: {lines[-1] if lines else ''}")
    return result.stdout.strip()


def _root() -> str:
    if os.geteuid() != 0:
        raise RuntimeError("not root: the local backend runs an OCI runtime and mounts overlays as root")
    return "running as root"


def _cgroups() -> str:
    root = Path("/sys/fs/cgroup")
    if (root / "cgroup.controllers").is_file():
        controllers = (root / "cgroup.controllers").read_text().split()
        missing = [c for c in ("memory", "pids", "cpu") if c not in controllers]
        if missing:
            raise RuntimeError(f"cgroup v2 without the {', '.join(missing)} controller(s)")
        return "cgroup v2 (" + " ".join(controllers) + ")"
    missing = [c for c in ("memory", "pids", "cpu") if not (root / c).is_dir()]
    if missing:
        raise RuntimeError(f"no cgroup v1 hierarchy for {', '.join(missing)} under /sys/fs/cgroup")
    return "cgroup v1 (memory, pids, cpu)"


def _overlay() -> str:
    if "overlay" not in Path("/proc/filesystems").read_text():
        subprocess.run(["modprobe", "overlay"], capture_output=True)
        if "overlay" not in Path("/proc/filesystems").read_text():
            raise RuntimeError("the kernel has no overlay filesystem")
    return "overlay filesystem available"


def _seccomp() -> str:
    from autoenv.sandbox.local.oci import DOCKER_CAPS
    from autoenv.sandbox.local.seccomp import default_profile, profile_path

    rules = default_profile(frozenset(DOCKER_CAPS)).get("syscalls", [])
    return f"{profile_path()} ({len(rules)} rules for Docker's default capabilities)"


def _exec_helper() -> str:
    """Every sandbox's PID 1 (autoenv/sandbox/local/exec_helper.c), compiled statically once per machine."""
    from autoenv.sandbox.local.exec_helper import helper_binary

    path = helper_binary()
    head = path.read_bytes()[:65536]
    if b"ld-linux" in head:
        raise RuntimeError(f"{path} is dynamically linked: the C library's static archive is missing (libc6-dev)")
    return f"{path} (static, {path.stat().st_size // 1024} KiB)"


def _sandbox_starts() -> str:
    """Start one sandbox (runc, its overlay and disk-bounded writable layer, the exec helper) and run a command in
    it: ``runc --version`` answering says nothing of whether runc can start a container here."""
    from autoenv.sandbox.local import oci
    from autoenv.sandbox.local.cache import cache_root
    from autoenv.sandbox.local.container import Container, ContainerConfig
    from autoenv.sandbox.toolbox import TOOLBOX_MOUNT, host_busybox_or_none

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="autoenv-doctor-root-") as root:
        for folder in ("proc", "dev", "sys", "tmp", "etc"):
            (Path(root) / folder).mkdir()
        sandbox_id = f"autoenv-doctor-{uuid.uuid4().hex[:8]}"
        config = ContainerConfig(rootfs=Path(root), env={"PATH": oci.DEFAULT_PATH}, storage_mb=64)
        container = Container(sandbox_id, cache_root() / "sandboxes" / sandbox_id, config)
        container.start()
        try:
            argv = [TOOLBOX_MOUNT, "true"] if host_busybox_or_none() is not None else ["/nonexistent"]
            result = asyncio.run(container.run(argv))
        finally:
            container.stop()
    if result.return_code not in (0, 127):
        raise RuntimeError(f"a command in a fresh sandbox exited {result.return_code}: {result.stderr.strip()[:300]}")
    return f"a sandbox started, ran a command and was removed in {time.monotonic() - started:.1f}s"


def _standin(ref: str) -> Callable[[], str]:
    def probe() -> str:
        from autoenv.sandbox.local.image import ensure_base, images_dir

        path = images_dir() / "standins" / "doctor.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as log:
            sub = ensure_base(ref, log)
        return sub.note if sub else f"{ref}: a real image"

    return probe


def _build_with_run_step() -> str:
    from autoenv.sandbox.local.image import control_build

    why = control_build("debian:bookworm")
    if why:
        raise RuntimeError(why)
    return "FROM debian:bookworm + RUN true built (build network and runtime work)"


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
        from autoenv.trials.runner import arun_trial

        with tempfile.TemporaryDirectory(prefix="autoenv-doctor-") as tmp:
            task = Path(tmp) / f"doctor-{mode}"
            for folder in ("environment", "solution", "tests"):
                (task / folder).mkdir(parents=True)
            (task / "task.toml").write_text(_TASK_TOML.format(mode=mode))
            (task / "instruction.md").write_text("Write the word ok to /app/out.txt.\n")
            (task / "environment" / "Dockerfile").write_text("FROM debian:bookworm\nWORKDIR /app\n")
            (task / "solution" / "solve.sh").write_text("#!/bin/sh\necho ok > /app/out.txt\n")
            (task / "tests" / "test.sh").write_text(
                "#!/bin/sh\nif grep -qx ok /app/out.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n"
            )
            outcome = asyncio.run(arun_trial(task, "oracle", env=env, trials_dir=Path(tmp) / "trials"))
        if outcome.error or outcome.reward != 1.0:
            raise RuntimeError(
                f"{outcome.error or 'reward ' + str(outcome.reward)}: "
                + (outcome.error_message or f"the oracle's file did not reach the verifier ({outcome.trial_dir})")
            )
        return f"oracle trial on {env} under network_mode={mode}: reward 1 in {outcome.duration_sec:.1f}s"

    return probe


def _docker() -> str:
    version = _run(["docker", "info", "--format", "{{.ServerVersion}}"], timeout=30)
    compose = _run(["docker", "compose", "version", "--short"], timeout=30)
    return f"Docker {version}, Compose {compose}"


def _docker_disk_bound() -> str:
    from autoenv.sandbox.docker import disk_bound_problem

    if problem := disk_bound_problem():
        raise RuntimeError(f"none: what the agent writes is the host's disk; {problem}")
    return "each sandbox's writable layer has storage_mb (--storage-opt size=)"


def diagnose(
    env: str = "local", *, builds: bool = True, trials: bool = True, on_check: Callable[[Check], None] | None = None
) -> Diagnosis:
    """Check every prerequisite of ``env`` (``local`` or ``docker``), in the order a run would meet them.

    ``builds=False`` stops after the programs answering (about a second: what every command checks before it
    starts); ``trials=False`` skips the two sandbox trials.
    """
    checks: list[Check] = []

    def add(check: Check) -> Check:
        checks.append(check)
        if on_check:
            on_check(check)
        return check

    if env == "local":
        add(_timed("root", _root, fix="run autoenv as root (or use --env docker)"))
        add(_timed("cgroups", _cgroups, fix="mount the cgroup hierarchies (a normal systemd boot does)"))
        add(_timed("overlay", _overlay, fix="modprobe overlay"))
        for pkg in backend_packages():
            add(
                _timed(
                    f"program {pkg.program}",
                    _installed(pkg),
                    fix=f"apt-get install -y {pkg.package}   (or: {SYSTEM_DEPS})",
                    need=pkg.need,
                )
            )
        add(_timed("seccomp profile", _seccomp, fix="apt-get install -y golang-github-containers-common"))
        add(_timed("exec helper builds", _exec_helper, fix=f"apt-get install -y gcc libc6-dev   (or: {SYSTEM_DEPS})"))
        add(_timed("runc answers", lambda: _run(["runc", "--version"]).splitlines()[0], fix="apt-get install -y runc"))
        add(
            _timed(
                "buildah answers",
                lambda: "storage driver " + _run(["buildah", "info", "--format", "{{.store.GraphDriverName}}"]),
                fix="apt-get install -y buildah",
            )
        )
        if not all(c.ok for c in checks if c.need is Need.REQUIRED):
            return Diagnosis(env=env, checks=checks)  # what follows would fail for the reasons above
        add(_timed("a sandbox starts", _sandbox_starts, fix=f"{SYSTEM_DEPS}; then autoenv doctor"))
        if not builds or not checks[-1].ok:
            return Diagnosis(env=env, checks=checks)
        for ref in MAIN_BASES:
            add(
                _timed(
                    f"stand-in {ref}",
                    _standin(ref),
                    fix=f"autoenv images make {ref}   (its log: ~/.cache/autoenv/images/standins/doctor.log)",
                )
            )
        add(_timed("build with a RUN step", _build_with_run_step, fix=f"{SYSTEM_DEPS}   (iptables, netavark)"))
        if trials and checks[-1].ok:
            add(_timed("sandbox, no-network", _trial("no-network", "local"), fix=f"{SYSTEM_DEPS}; then autoenv doctor"))
            add(_timed("sandbox, public", _trial("public", "local"), fix="apt-get install -y slirp4netns"))
    elif env == "docker":
        add(_timed("docker daemon and compose", _docker, fix="bash scripts/docker-setup.sh"))
        if checks[-1].ok:
            from autoenv.sandbox.docker import DISK_BOUND_FIX

            add(_timed("disk bound per sandbox", _docker_disk_bound, fix=DISK_BOUND_FIX, need=Need.OPTIONAL))
        if trials and checks[-1].ok:
            add(_timed("sandbox, no-network", _trial("no-network", "docker"), fix="bash scripts/docker-setup.sh"))
    else:
        add(
            Check(
                name=f"backend {env}",
                ok=True,
                need=Need.OPTIONAL,
                detail="not checked: the doctor knows the local and docker backends; the provider's own tools apply",
            )
        )
    return Diagnosis(env=env, checks=checks)


def _installed(pkg: Package) -> Callable[[], str]:
    def probe() -> str:
        if not pkg.present():
            raise RuntimeError(f"{pkg.program} not found: {pkg.why}")
        return f"{pkg.program} ({pkg.package}): {pkg.why}"

    return probe


def require_machine(env: str = "local") -> None:
    """Raise :class:`~autoenv.errors.MachineError` with the doctor's advice when ``env`` cannot work here.

    The cheap checks only (root, cgroups, programs, seccomp, runc and buildah answering: about a second), once
    per process: what the flywheel, ``propose``, ``validate`` and ``calibrate`` run before they start, so that a
    broken machine stops them with the fix instead of being recorded as a run of invalid tasks.
    """
    from autoenv.errors import MachineError

    if env != "local" or env in _machine_ok:
        return
    diagnosis = diagnose(env, builds=False, trials=False)
    if not diagnosis.ok:
        raise MachineError(f"the local backend cannot work on this machine:\n{diagnosis.advice()}")
    _machine_ok.add(env)


_machine_ok: set[str] = set()


if __name__ == "__main__":  # pragma: no cover
    print(diagnose(sys.argv[1] if len(sys.argv) > 1 else "local").model_dump_json(indent=2))
