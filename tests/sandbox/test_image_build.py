"""Real images: tasks shaped like public Harbor tasks build with buildah and pass their oracle.

Each task does something the old host-userland replay could not: install an
apt package the host lacks, call ``python`` (not ``python3``) in a python
image, start FROM a registry mirror of an official image, use a multi-stage
build. Base images come from a registry where one answers and are stand-ins
made from Debian's packages where none does; either way the trial says which.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from autoenv.sandbox.local import standins
from autoenv.trials.runner import run_trial
from tests.conftest import needs_namespaces

pytestmark = needs_namespaces

VERIFY_OUT = """#!/bin/bash
mkdir -p /logs/verifier
if [ "$(cat /app/out.txt 2>/dev/null)" = "{expected}" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""  # noqa: E501


def _task(make_task, name: str, dockerfile: str, solve: str, expected: str, **kwargs) -> Path:
    return make_task(name, dockerfile=dockerfile, solve=solve, test_sh=VERIFY_OUT.format(expected=expected), **kwargs)


@pytest.mark.skipif(shutil.which("hello") is not None, reason="the point is a package the host does not have")
def test_apt_get_installs_a_package_the_host_lacks(make_task, trials_dir):
    task = _task(
        make_task,
        "apt-hello",
        "FROM python:3.12-slim\nRUN apt-get update && apt-get install -y --no-install-recommends hello && rm -rf "
        "/var/lib/apt/lists/*\nWORKDIR /app\n",
        "#!/bin/bash\nhello > /app/out.txt\n",
        "Hello, world!",
    )
    assert run_trial(task, "oracle", trials_dir=trials_dir).reward == 1.0
    assert run_trial(task, "nop", trials_dir=trials_dir).reward == 0.0


def test_python_image_has_python_pip_and_its_minor_version(make_task, trials_dir):
    task = _task(
        make_task,
        "python-cmd",
        "FROM python:3.12-slim\nRUN pip install --no-cache-dir pytest==8.3.4 && python -c 'import pytest'\nWORKDIR "
        "/app\n",
        "#!/bin/bash\npython -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])' > /app/out.txt\n",
        "3.12" if "3.12" in standins._pyenv_versions() else standins.debian_python(),
    )
    outcome = run_trial(task, "oracle", trials_dir=trials_dir)
    assert outcome.reward == 1.0, outcome


def test_registry_mirror_of_an_official_image_and_multi_stage_build(make_task, trials_dir):
    dockerfile = """\
FROM public.ecr.aws/docker/library/python:3.12-slim-bookworm AS builder
RUN mkdir -p /out && python3 -c "print(6 * 7)" > /out/answer.txt
FROM public.ecr.aws/docker/library/python:3.12-slim-bookworm
COPY --from=builder /out/answer.txt /opt/answer.txt
WORKDIR /app
"""
    task = _task(make_task, "mirror-multistage", dockerfile, "#!/bin/bash\ncp /opt/answer.txt /app/out.txt\n", "42")
    outcome = run_trial(task, "oracle", trials_dir=trials_dir)
    assert outcome.reward == 1.0, outcome
    record = json.loads((Path(outcome.trial_dir) / "autoenv-image.json").read_text())
    if record["substitutions"]:  # no registry answered: the stand-in is named, never silent
        sub = record["substitutions"][0]
        assert sub["requested"] == "public.ecr.aws/docker/library/python:3.12-slim-bookworm"
        assert sub["stand_in"].startswith(standins.STANDIN_REPO)
        assert "Debian bookworm" in sub["note"]
        assert outcome.stand_ins and "Debian bookworm" in outcome.stand_ins[0]


def test_tbench_and_ubuntu_bases_have_stand_ins():
    assert standins.standin_for("ghcr.io/laude-institute/t-bench/python-3-13:20250620").python in {
        "3.13",
        standins.debian_python(),
    }
    assert standins.standin_for("ghcr.io/laude-institute/t-bench/ubuntu-24-04:latest").kind == "debian"
    assert standins.standin_for("ubuntu:24.04").suite == "bookworm"
    assert standins.standin_for("debian:trixie-slim").suite == "trixie"
    assert standins.standin_for("python:3.11-slim-trixie").suite == "trixie"
    assert standins.standin_for("nvidia/cuda:12.4.0-base") is None


def test_unknown_base_and_failing_step_name_the_problem(make_task, trials_dir):
    unknown = make_task("unknown-base", dockerfile="FROM nvidia/cuda:12.4.0-base-ubuntu22.04\nWORKDIR /app\n")
    outcome = run_trial(unknown, "oracle", trials_dir=trials_dir)
    if outcome.error != "build":
        pytest.skip("a registry answered and the image was pulled")
    assert "no stand-in" in outcome.error_message and "nvidia/cuda" in outcome.error_message

    broken = make_task("bad-step", dockerfile="FROM python:3.12-slim\nWORKDIR /app\nRUN echo building && exit 3\n")
    outcome = run_trial(broken, "oracle", trials_dir=trials_dir)
    assert outcome.error == "build"
    assert "Dockerfile:3" in outcome.error_message, outcome.error_message


def test_images_share_layers_with_the_same_prefix(make_task):
    """Two tasks whose Dockerfiles share a prefix reuse its layers (buildah's layer cache)."""
    import asyncio

    from harbor.environments.definition import environment_content_hash

    from autoenv.sandbox.local.image import build_image

    prefix = "FROM python:3.12-slim\nRUN pip install --no-cache-dir pytest==8.3.4\n"
    a = make_task("share-a", dockerfile=prefix + "RUN echo a > /a\n")
    b = make_task("share-b", dockerfile=prefix + "RUN echo b > /b\n")

    def layers(task: Path) -> list[str]:
        env = task / "environment"
        image = asyncio.run(build_image(env, key=environment_content_hash(env)))
        info = json.loads(
            subprocess.run(
                ["buildah", "inspect", "--type", "image", image.config.image],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        return info["OCIv1"]["rootfs"]["diff_ids"]

    la, lb = layers(a), layers(b)
    assert la[:-1] == lb[:-1] and la[-1] != lb[-1]


@pytest.mark.parametrize("base", ["python:3.12-slim", "debian:bookworm"])
def test_a_digest_pinned_base_builds_on_its_stand_in_and_records_the_pin(make_task, trials_dir, base):
    """Careful authors pin bases by digest (Terminal-Bench 2 requires it); where no registry serves the digest,
    the stand-in is used under the pinned name and the substitution says which digest was asked for."""
    digest = "sha256:" + "ab" * 32
    task = _task(
        make_task,
        f"pinned-{base.split(':')[0]}",
        f"FROM {base}@{digest}\nWORKDIR /app\nRUN echo pinned > /etc/pinned\n",
        "#!/bin/bash\ncat /etc/pinned > /app/out.txt\n",
        "pinned",
    )
    outcome = run_trial(task, "oracle", trials_dir=trials_dir)
    assert outcome.error is None, outcome.error_message
    assert outcome.reward == 1.0
    assert any(digest in note for note in outcome.stand_ins), outcome.stand_ins
