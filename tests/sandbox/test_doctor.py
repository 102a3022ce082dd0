"""`autoenv doctor` and machine faults: a broken machine is said, with its fix, and never scored as a bad task."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autoenv.errors import BuildError, Fault, MachineError, explain
from autoenv.sandbox.docker import disk_bound_problem
from autoenv.sandbox.local import image
from autoenv.sandbox.local.preflight import backend_packages
from autoenv.store.db import Store
from autoenv.trials.doctor import diagnose
from tests.conftest import REPO, docker_problem, needs_namespaces

AUTOENV = [sys.executable, "-m", "autoenv.cli.main"]


def test_every_program_the_doctor_requires_is_installed_by_the_setup_scripts():
    listed = subprocess.run(
        ["bash", str(REPO / "scripts" / "system-deps.sh"), "--list"], capture_output=True, text=True, check=True
    ).stdout.split()
    packages = backend_packages()
    assert {p.package for p in packages} <= set(listed)
    # the program that failed a fresh machine's every build: buildah's netavark network needs iptables
    assert {"iptables", "netavark", "buildah", "runc", "slirp4netns", "mmdebstrap"} <= {p.package for p in packages}
    # the set-up script reads the same list the doctor checks (no second copy to drift)
    assert "autoenv/sandbox/local/debian-packages.tsv" in (REPO / "scripts" / "system-deps.sh").read_text()


def test_machine_signs_in_buildah_output_are_machine_faults_not_task_faults():
    output = 'Error: building at STEP "RUN apt-get update": netavark: No such file or directory (os error 2)\n'
    why = image.machine_fault(output, None)
    assert why and "netavark" in why and "autoenv doctor" in why
    explained = explain(MachineError(why))
    assert explained.kind is Fault.SANDBOX and explained.exit_code == 4 and "autoenv doctor" in explained.advice
    assert explain(BuildError("Dockerfile:3: build failed")).kind is Fault.TASK


@needs_namespaces
def test_a_failing_run_step_of_the_task_is_the_tasks_fault(make_task):
    task = make_task("bad-step", dockerfile="FROM debian:bookworm\nRUN false\n")
    with pytest.raises(BuildError) as caught:
        import asyncio

        asyncio.run(image.build_image(task / "environment", key="doctor-bad-step", timeout_sec=120))
    assert not isinstance(caught.value, MachineError)
    assert "Dockerfile:2" in str(caught.value)


@pytest.mark.slow
@needs_namespaces
def test_doctor_passes_on_this_machine_and_says_what_it_checked():
    done = subprocess.run([*AUTOENV, "doctor"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    for check in ("program iptables", "seccomp profile", "build with a RUN step", "sandbox, no-network", "public"):
        assert check in done.stderr
    assert "works on this machine" in done.stderr


def _shim(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return folder


@needs_namespaces
def test_a_buildah_that_always_fails_stops_the_flywheel_and_records_nothing(tmp_path):
    shims = _shim(tmp_path / "bin", "buildah", 'echo "buildah: storage is broken" >&2; exit 125')
    env = {**os.environ, "PATH": f"{shims}:{os.environ['PATH']}"}
    db = tmp_path / "fw.db"
    Store(str(db))  # an empty store, so that "nothing recorded" is asked of a store the run could have written
    started = time.monotonic()
    done = subprocess.run(
        [*AUTOENV, "flywheel", "--steps", "1", "--db", str(db), "--out", str(tmp_path / "out")],
        capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert time.monotonic() - started < 60
    assert done.returncode == 4, done.stderr
    assert "buildah" in done.stderr and "autoenv doctor" in done.stderr and "fix:" in done.stderr
    assert Store(str(db)).attempts() == []  # nothing was scored: no attempt recorded as an invalid task
    doctor = subprocess.run([*AUTOENV, "doctor", "--quick"], capture_output=True, text=True, env=env, timeout=120)
    assert doctor.returncode == 4
    assert "FAIL buildah answers" in doctor.stderr and "apt-get install -y buildah" in doctor.stderr


def test_a_stand_in_that_cannot_be_made_is_a_machine_fault_tried_once(tmp_path, monkeypatch):
    calls = tmp_path / "calls"
    shims = _shim(tmp_path / "bin", "mmdebstrap", f'echo x >> {calls}; echo "mmdebstrap: cannot reach" >&2; exit 1')
    _shim(shims, "buildah", "exit 125")  # a machine whose images are gone: every stand-in has to be made again
    monkeypatch.setenv("PATH", f"{shims}:{os.environ['PATH']}")
    monkeypatch.setenv("AUTOENV_OFFLINE", "1")
    monkeypatch.setenv("AUTOENV_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(image, "_standin_failed", {})
    ref = "debian:bookworm"
    log = tmp_path / "build.log"
    for _ in range(3):
        with open(log, "a") as handle, pytest.raises(MachineError, match="could not make the stand-in"):
            image.ensure_base(ref, handle)
    assert calls.read_text().count("x") == 1


def test_output_that_is_not_a_terminal_gets_one_line_per_event():
    code = (
        "from autoenv.cli.common import progress_bar\n"
        "with progress_bar('[bold]work', 'note') as p:\n"
        "    t = p.add_task('work', total=2, note='')\n"
        "    p.update(t, note='building')\n"
        "    p.update(t, note='building')\n"
        "    p.update(t, advance=1, note='one done')\n"
        "    p.update(t, advance=1, note='two done')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.splitlines() == ["work 0/2: building", "work 1/2: one done", "work 2/2: two done"]


def test_diagnose_without_builds_is_quick_and_names_each_program():
    started = time.monotonic()
    diagnosis = diagnose("local", builds=False, trials=False)
    assert time.monotonic() - started < 20
    names = {c.name for c in diagnosis.checks}
    assert {"root", "cgroups", "program iptables", "runc answers", "buildah answers"} <= names


def test_a_failed_control_build_is_remembered_as_the_machines_fault(tmp_path, monkeypatch):
    """The control build runs once per base; a later failure on that base is still the machine's, not the task's."""
    calls = tmp_path / "calls"
    shims = _shim(tmp_path / "bin", "buildah", f'echo x >> {calls}; echo "Error: cannot run anything" >&2; exit 1')
    monkeypatch.setenv("PATH", f"{shims}:{os.environ['PATH']}")
    monkeypatch.setattr(image, "_control", {})
    output = 'Error: building at STEP "RUN make": exit status 2\n'  # no known sign: only the control can tell
    first = image.machine_fault(output, "debian:bookworm")
    second = image.machine_fault(output, "debian:bookworm")
    assert first and second and "even a one-line RUN step" in second
    assert calls.read_text().count("x") == 2  # one control build and its clean-up, not one per failure


def test_the_bundled_tasks_agentcall_is_the_packaged_one():
    """A task must carry its own tests/agentcall.py (Harbor runs it without autoenv); it is a copy, never a fork."""
    from autoenv.grading import AGENTCALL

    copies = sorted(REPO.glob("examples/tasks/*/tests/agentcall.py"))
    assert copies
    assert [p for p in copies if p.read_text() != AGENTCALL] == []


@pytest.mark.docker
@pytest.mark.skipif(docker_problem() is not None, reason=f"Docker backend: {docker_problem()}")
def test_the_docker_doctor_says_whether_sandboxes_have_a_disk_bound():
    """overlay2 on ext4 refuses --storage-opt size=: the doctor says the Docker backend has no disk bound, and how
    to get one; on a daemon that can bound it, that it does (asked of the daemon itself, not guessed)."""
    check = next(c for c in diagnose("docker", trials=False).checks if c.name == "disk bound per sandbox")
    info = subprocess.run(["docker", "info", "--format", "{{.Driver}} {{json .DriverStatus}}"], capture_output=True)
    on_ext4 = b"overlay2" in info.stdout and b"extfs" in info.stdout
    assert check.ok is (disk_bound_problem() is None) and (not on_ext4 or not check.ok), check
    if not check.ok:
        assert "host's disk" in check.detail and "pquota" in check.fix, check


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.skipif(docker_problem() is not None, reason=f"Docker backend: {docker_problem()}")
def test_the_docker_doctor_starts_a_real_trial_even_without_a_disk_bound():
    """The optional disk-bound warning does not stop the doctor before its real trial, and that trial's base image is
    one the offline Docker set-up loads (a base the daemon lacks would fail on a pull, reading as a broken daemon)."""
    checks = {c.name: c for c in diagnose("docker").checks}
    assert checks["sandbox, no-network"].ok, checks["sandbox, no-network"]
    assert all(c.ok for c in checks.values() if c.need == "required"), checks
