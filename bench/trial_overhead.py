"""Per-trial cost: the local backend against the bare script and Harbor's Docker environment, side by side.

For each task, in one run on one machine:
- bare: the oracle's solve.sh and the task's own test.sh (its broker and the test users' processes) run with
  ``chroot`` in an overlay of the task's built image (no container, no Harbor, no transfers): the work itself,
  the physical floor;
- local: a Harbor trial on ``--env local`` in-process (image cached): container
  start, oracle, tests upload, verifier, teardown;
- docker: the same trial on Harbor's own, unchanged ``DockerEnvironment`` (image cached), when a
  Docker daemon answers. Bundled tasks are ``no-network``, which Harbor's docker
  environment cannot enforce offline, so the docker run uses a copy set to
  ``network_mode = "public"`` (the local column is measured on that copy too);
- autoenv docker: the same on ``--env docker`` (:mod:`autoenv.sandbox.docker`: Harbor's class, with
  containers discarded without Docker's stop grace).

Prints each time and the ratios local/bare, docker/local and docker/autoenv docker.
Run: .venv/bin/python bench/trial_overhead.py [TASK ...]
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harbor.environments.definition import environment_content_hash  # noqa: E402

from autoenv.sandbox.local.image import build_image  # noqa: E402
from autoenv.trials.runner import quiet_harbor_logs, run_trial  # noqa: E402
from bench._common import best_of, machine  # noqa: E402

TASKS = Path(__file__).resolve().parents[1] / "examples" / "tasks"
HARBOR_DOCKER = "harbor.environments.docker.docker:DockerEnvironment"
DEFAULT = ["fix-median-bug", "log-parser-cli", "csv-statistic"]


def bare(task: Path) -> None:
    """solve.sh, then the task's own tests/test.sh (its broker, the grader's and nobody's processes included), run
    with ``chroot`` in a throwaway overlay of the task's built image: the same programs and the same work as a
    trial, without a container, Harbor or any transfer."""
    image = asyncio.run(
        build_image(task / "environment", key=environment_content_hash(task / "environment", docker_image=None))
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        upper, work, merged = root / "upper", root / "work", root / "merged"
        for d in (upper, work, merged):
            d.mkdir()
        opts = f"lowerdir={image.rootfs},upperdir={upper},workdir={work}"
        subprocess.run(["mount", "-t", "overlay", "overlay", "-o", opts, str(merged)], check=True)
        try:
            subprocess.run(["mount", "-t", "proc", "proc", str(merged / "proc")], check=True)
            subprocess.run(["mount", "--rbind", "/dev", str(merged / "dev")], check=True)
            shutil.copytree(task / "tests", merged / "tests")
            shutil.copytree(task / "solution", merged / "solution")
            (merged / "logs" / "verifier").mkdir(parents=True, exist_ok=True)
            env = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root"}
            workdir = image.config.workdir or "/"

            def inside(script: str) -> subprocess.CompletedProcess:
                argv = ["chroot", str(merged), "sh", "-c", f"cd {workdir} && bash {script}"]
                return subprocess.run(argv, capture_output=True, text=True, env=env)

            inside("/solution/solve.sh")
            out = inside("/tests/test.sh")
            reward = (merged / "logs" / "verifier" / "reward.txt").read_text().strip()
            assert reward == "1", (out.stdout + out.stderr)[-800:]
        finally:
            subprocess.run(["umount", "-R", "-l", str(merged)], check=False)


def public_copy(task: Path, root: Path) -> Path:
    copy = root / task.name
    shutil.copytree(task, copy)
    toml = copy / "task.toml"
    toml.write_text(re.sub(r'network_mode\s*=\s*"no-network"', 'network_mode = "public"', toml.read_text()))
    return copy


def docker_available() -> str | None:
    try:
        info = subprocess.run(
            ["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return info.stdout.strip() if info.returncode == 0 else None


def timed_trial(task: Path, trials: Path, env: str) -> float:
    def once() -> None:
        outcome = run_trial(task, "oracle", env=env, trials_dir=trials)
        assert outcome.reward == 1.0, outcome

    once()  # build and cache the image
    return best_of(3, once)


def main() -> None:
    quiet_harbor_logs()
    names = sys.argv[1:] or DEFAULT
    docker = docker_available()
    print(f"machine: {machine()}; docker: {docker or 'no daemon (docker column skipped)'}")
    print(
        f"{'task':<22} {'bare':>8} {'local':>8} {'docker':>8} {'autoenv docker':>15} {'local/bare':>11} "
        f"{'docker/local':>13} {'docker/autoenv docker':>22}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        trials = Path(tmp) / "trials"
        for name in names:
            task = public_copy(TASKS / name, Path(tmp))
            floor = best_of(3, lambda task=task: bare(task))
            local = timed_trial(task, trials, "local")
            dock = timed_trial(task, trials, HARBOR_DOCKER) if docker else None
            ours = timed_trial(task, trials, "docker") if docker else None
            print(
                f"{name:<22} {floor * 1000:>6.0f}ms {local * 1000:>6.0f}ms "
                f"{(f'{dock * 1000:.0f}ms') if dock else '-':>8} {(f'{ours * 1000:.0f}ms') if ours else '-':>15} "
                f"{local / floor:>10.2f}x {(f'{dock / local:.1f}x') if dock else '-':>13} "
                f"{(f'{dock / ours:.1f}x') if dock and ours else '-':>22}"
            )


if __name__ == "__main__":
    main()
