"""The local backend's preflight: the doctor's probes of this machine, in the order a run meets them.

A missing program does not announce itself: buildah without iptables builds nothing with a ``RUN`` step, and a
run that then records every task as "does not build" has measured the machine, not the tasks. Each probe uses
what a stage will use: the programs of the backend (one list with the set-up script, ``debian-packages.tsv``),
root and cgroups, overlay, the seccomp profile, runc and buildah answering, a sandbox started, the stand-in base
images and a one-line Dockerfile whose ``RUN`` step needs the build network. The doctor
(:mod:`autoenv.trials.doctor`) runs them and then a real trial under each of ``TRIAL_MODES``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

from pydantic import BaseModel

from autoenv.sandbox.backend import Need, Probe, RunProbe, command_output

SYSTEM_DEPS = "bash scripts/system-deps.sh backend"
#: The base images the bundled tasks and the offline main job start from.
MAIN_BASES = ("debian:bookworm", "python:3.12-slim")
#: the doctor's real trials on this backend: network mode, and the fix when it fails
TRIAL_MODES = (("no-network", f"{SYSTEM_DEPS}; then autoenv doctor"), ("public", "apt-get install -y slirp4netns"))


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


def _installed(pkg: Package) -> Callable[[], str]:
    def probe() -> str:
        if not pkg.present():
            raise RuntimeError(f"{pkg.program} not found: {pkg.why}")
        return f"{pkg.program} ({pkg.package}): {pkg.why}"

    return probe


def preflight(probe: RunProbe, *, builds: bool = True) -> bool:
    """Run the probes through ``probe`` (see :meth:`autoenv.sandbox.backend.Backend.preflight`): the cheap ones
    (about a second), then, where they held, a sandbox; with ``builds`` the stand-ins and a build. True when the
    doctor's trials may start."""

    def held(p: Probe) -> bool:
        return probe(p) or p.need is Need.OPTIONAL

    cheap = [
        Probe("root", _root, fix="run autoenv as root (or use --env docker)"),
        Probe("cgroups", _cgroups, fix="mount the cgroup hierarchies (a normal systemd boot does)"),
        Probe("overlay", _overlay, fix="modprobe overlay"),
        *(
            Probe(
                f"program {pkg.program}",
                _installed(pkg),
                fix=f"apt-get install -y {pkg.package}   (or: {SYSTEM_DEPS})",
                need=pkg.need,
            )
            for pkg in backend_packages()
        ),
        Probe("seccomp profile", _seccomp, fix="apt-get install -y golang-github-containers-common"),
        Probe("exec helper builds", _exec_helper, fix=f"apt-get install -y gcc libc6-dev   (or: {SYSTEM_DEPS})"),
        Probe(
            "runc answers", lambda: command_output(["runc", "--version"]).splitlines()[0], fix="apt-get install -y runc"
        ),
        Probe(
            "buildah answers",
            lambda: "storage driver " + command_output(["buildah", "info", "--format", "{{.store.GraphDriverName}}"]),
            fix="apt-get install -y buildah",
        ),
    ]
    if not all([held(p) for p in cheap]):  # every probe runs; what follows would fail for the reasons found
        return False
    if not probe(Probe("a sandbox starts", _sandbox_starts, fix=f"{SYSTEM_DEPS}; then autoenv doctor")) or not builds:
        return False
    for ref in MAIN_BASES:
        probe(
            Probe(
                f"stand-in {ref}",
                _standin(ref),
                fix=f"autoenv images make {ref}   (its log: ~/.cache/autoenv/images/standins/doctor.log)",
            )
        )
    return probe(Probe("build with a RUN step", _build_with_run_step, fix=f"{SYSTEM_DEPS}   (iptables, netavark)"))
