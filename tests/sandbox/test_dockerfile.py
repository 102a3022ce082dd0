"""Dockerfile replay: what the local backend honours, and how it refuses the rest."""

from __future__ import annotations

import pytest

from autoenv.sandbox.local import dockerfile as df
from autoenv.trials.runner import run_trial
from tests.conftest import needs_namespaces


def test_parse_continuations_comments_and_flags(tmp_path):
    path = tmp_path / "Dockerfile"
    path.write_text("# comment\nFROM python:3.12-slim AS base\nRUN echo a \\\n  # inside\n  && echo b\nCOPY --chown=root:root a.txt /app/\n")
    instructions = df.parse(path)
    assert [i.keyword for i in instructions] == ["FROM", "RUN", "COPY"]
    assert instructions[1].line == 3 and "echo b" in instructions[1].args
    assert instructions[2].flags == {"chown": "root:root"}


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("FROM python:3.12\nSHELL [\"/bin/bash\"]\n", 2, "SHELL is not supported"),
        ("FROM python:3.12\nFROM debian:12\n", 2, "multi-stage"),
        ("RUN echo hi\n", 1, "before FROM"),
        ("WORKDIR /app\n", 1, "before FROM"),
    ],
)
def test_parse_errors_name_the_line(tmp_path, text, line, fragment):
    path = tmp_path / "Dockerfile"
    path.write_text(text)
    with pytest.raises(df.DockerfileError) as err:
        df.parse(path)
    assert err.value.line == line and fragment in str(err.value) and str(path) in str(err.value)


def test_substitution_and_env_forms():
    assert df.substitute("${A}/x/$B/${C:-dflt}", {"A": "1", "B": "2"}) == "1/x/2/dflt"
    assert df.parse_env_args('A=1 B="two words"') == {"A": "1", "B": "two words"}
    assert df.parse_env_args("LEGACY some value") == {"LEGACY": "some value"}


def test_base_images():
    assert df.is_supported_base("python:3.12-slim")
    assert df.is_supported_base("ubuntu")
    assert not df.is_supported_base("nvidia/cuda:12.4.0-devel-ubuntu22.04")


@needs_namespaces
@pytest.mark.parametrize(
    "dockerfile, fragment",
    [
        ("FROM nvidia/cuda:12.4.0-base\nWORKDIR /app\n", "Dockerfile:1"),
        ("FROM python:3.12-slim\nRUN apt-get update && apt-get install -y definitely-not-a-package-xyz\n", "Dockerfile:2"),
        ("FROM python:3.12-slim\nWORKDIR /app\nCOPY missing.txt /app/\n", "Dockerfile:3"),
        ("FROM python:3.12-slim\nRUN exit 3\n", "exited with code 3"),
        ("FROM python:3.12-slim\nADD https://example.invalid/x.tgz /app/\n", "remote URLs"),
    ],
)
def test_build_failures_are_reported_with_the_line(make_task, trials_dir, dockerfile, fragment):
    task = make_task("broken", dockerfile=dockerfile)
    outcome = run_trial(task, "oracle", trials_dir=trials_dir)
    assert outcome.error == "build", outcome
    assert fragment in outcome.error_message


@needs_namespaces
def test_apt_get_of_installed_packages_passes_and_run_persists(make_task, trials_dir):
    dockerfile = ("FROM python:3.12-slim\nRUN apt-get update && apt-get install -y --no-install-recommends coreutils bash libc-dev\n"
                  "WORKDIR /srv/tool\nRUN echo built > marker.txt\nWORKDIR /app\n")
    solve = "#!/bin/bash\n[ \"$(cat /srv/tool/marker.txt)\" = built ] && echo hello > /app/out.txt\n"
    task = make_task("aptok", dockerfile=dockerfile, solve=solve)
    outcome = run_trial(task, "oracle", trials_dir=trials_dir)
    assert outcome.reward == 1.0, outcome
