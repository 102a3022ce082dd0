"""Every fault lands on the party that caused it (issue 38): the agent's as a verdict, the task's as an invalid task,
the machine's as a stop with nothing recorded. Real builds, real runc, real CLI processes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import uuid

import pytest

from autoenv.errors import BuildError
from autoenv.sandbox.local import image
from autoenv.trials.attribution import PARTY_OF_KIND, Party, party
from autoenv.validate.cache import record_path
from tests.conftest import REPO, needs_namespaces, write_task

AUTOENV = [sys.executable, "-m", "autoenv.cli.main"]


def test_every_error_kind_a_trial_records_has_one_party():
    from autoenv.trials.attribution import ERROR_KINDS

    assert set(ERROR_KINDS.values()) <= set(PARTY_OF_KIND), set(ERROR_KINDS.values()) - set(PARTY_OF_KIND)
    assert party(None) is Party.AGENT and party("agent_limit") is Party.AGENT
    assert party("machine") is Party.MACHINE and party("build") is Party.TASK
    # faults after a sandbox started are what root in it can cause: never a stop of the run
    assert party("sandbox") is Party.AGENT and party("HelperGone") is Party.AGENT


@needs_namespaces
def test_a_run_step_that_prints_machine_signs_and_fails_is_the_tasks_fault(tmp_path):
    """A proposed Dockerfile whose RUN prints what buildah prints for a broken machine, then fails: the control
    build says the machine works, so it is the task's build error (today's code said MachineError, exit 4)."""
    env_dir = tmp_path / "environment"
    env_dir.mkdir()
    marker = uuid.uuid4().hex[:8]
    (env_dir / "Dockerfile").write_text(
        "FROM debian:bookworm\n"
        f"RUN echo {marker} && echo 'Error: netavark: iptables: slirp4netns: OCI runtime error: runc: failed' "
        "&& echo 'no space left on device' >&2 && exit 3\n"
    )
    with pytest.raises(BuildError, match="Dockerfile:2"):
        asyncio.run(image.build_image(env_dir, key=f"signs-{marker}", timeout_sec=300))


RUNC_THAT_CANNOT_START = """#!/bin/sh
# answers like runc, but cannot start a container
for arg in "$@"; do
  if [ "$arg" = run ]; then echo "runc: container_linux.go: starting container process caused: broken" >&2; exit 1; fi
done
exec {real} "$@"
"""


@needs_namespaces
def test_a_runc_that_cannot_start_stops_validation_and_records_nothing(tmp_path):
    import shutil

    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "runc").write_text(RUNC_THAT_CANNOT_START.format(real=shutil.which("runc")))
    (shims / "runc").chmod(0o755)
    env = {**os.environ, "PATH": f"{shims}:{os.environ['PATH']}", "AUTOENV_SPARES": "0"}
    task = write_task(tmp_path / "tasks", "fine-task")
    # the library, past the doctor: the machine fault stops validation (today: an invalid task, "error sandbox")
    code = textwrap.dedent(
        f"""
        import asyncio, sys
        from autoenv.errors import MachineError
        from autoenv.validate.validation import avalidate_task
        try:
            asyncio.run(avalidate_task({str(task)!r}, trials_dir={str(tmp_path / "trials")!r}))
        except MachineError as exc:
            print("MACHINE", exc)
            sys.exit(4)
        print("VERDICT")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert done.returncode == 4 and "MACHINE" in done.stdout and "broken" in done.stdout, done.stdout + done.stderr
    assert not record_path(task, "validation").exists()
    # the CLI: its doctor now starts a sandbox, so it stops before the first trial, with the fix
    cli = subprocess.run(
        [*AUTOENV, "validate", str(task)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300
    )
    assert cli.returncode == 4, cli.stdout + cli.stderr
    assert "a sandbox starts" in cli.stderr and "autoenv doctor" in cli.stderr, cli.stderr
    assert not record_path(task, "validation").exists()


@needs_namespaces
@pytest.mark.slow
def test_concurrent_builds_of_overlapping_dockerfiles_all_succeed(tmp_path):
    """Builds that share cached layers, at once, in two processes of three builds each (CI saw buildah's "layer not
    known" when another build changed the store under one)."""
    script = textwrap.dedent(
        """
        import asyncio, sys
        from pathlib import Path
        from autoenv.sandbox.local.image import build_image
        root, tag = Path(sys.argv[1]), sys.argv[2]
        async def main():
            jobs = []
            for i in range(3):
                env = root / f"{tag}-{i}"
                env.mkdir(parents=True)
                (env / "Dockerfile").write_text(
                    "FROM debian:bookworm\\nRUN echo shared > /shared\\n"
                    f"RUN echo {tag}-{i} > /own\\nRUN cat /shared /own\\n"
                )
                jobs.append(build_image(env, key=f"race-{tag}-{i}", timeout_sec=300))
            images = await asyncio.gather(*jobs)
            print(len(images), "built")
        asyncio.run(main())
        """
    )
    run = uuid.uuid4().hex[:6]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path), f"{run}{n}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )  # fmt: skip
        for n in range(2)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0 and "3 built" in out, err[-3000:]
