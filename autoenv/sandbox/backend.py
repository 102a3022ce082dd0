"""The one seam between the stages and a sandbox backend: what a stage may ask of one, whatever runs it.

A stage above ``sandbox/`` never imports a backend's package: it asks :func:`autoenv.sandbox.backends.get_backend`
for the backend of a name and reads this interface. What it offers, each with a generic answer for Harbor's
environments (which build inside the trial and know nothing of autoenv's doctor):

- ``environment_config``: Harbor's ``EnvironmentConfig`` for a trial;
- ``build`` / ``is_built`` (where ``builds_images``): the task's image built before any trial, so validation reports a
  broken Dockerfile line without a trial and scans the image the agent starts in;
- ``base_rootfs``: the root of a Dockerfile's base image, to tell the task's files from the base system's;
- ``preflight``: the doctor's probes of this machine, in the order a run meets them, and ``trial_modes``, the
  network modes the doctor starts a real trial under.

Like Harbor's ``verifier/base.py`` with its factory: one base class, subclasses chosen by name in one place.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import ClassVar, Protocol

from harbor.models.trial.config import EnvironmentConfig

#: Name of the file in the trial folder where a backend records the image (and any stand-in base) a trial ran on.
IMAGE_RECORD = "autoenv-image.json"


class Need(StrEnum):
    REQUIRED = "required"
    OPTIONAL = "optional"


@dataclass(frozen=True)
class Probe:
    """One prerequisite the doctor checks: ``probe`` returns what it saw (ok) or raises with why it failed."""

    name: str
    probe: Callable[[], str | None]
    fix: str = ""
    need: Need = Need.REQUIRED


#: runs one probe, records it and says whether it held
RunProbe = Callable[[Probe], bool]


class BuiltImage(Protocol):
    """A task's image built by a backend: its folder (metadata, build log) and the root filesystem agents see."""

    directory: Path
    rootfs: Path


class Backend:
    """A sandbox backend as the stages see it; the defaults are those of Harbor's environments."""

    name: str
    #: builds a task's image itself before any trial (else the image is built inside each trial)
    builds_images: ClassVar[bool] = False
    #: can hide host paths from a sandbox (the ``mask_paths`` environment option)
    masks_paths: ClassVar[bool] = False
    #: the doctor's cheap probes run before every run on this backend (``trials.doctor.require_machine``)
    checked_before_runs: ClassVar[bool] = False
    #: the network modes the doctor starts a real trial under, each with its fix
    trial_modes: ClassVar[tuple[tuple[str, str], ...]] = ()

    def environment_config(self, **kwargs) -> EnvironmentConfig:
        raise NotImplementedError

    async def build(
        self, environment_dir: Path, *, key: str, docker_image: str | None, timeout_sec: float, force: bool = False
    ) -> BuiltImage:
        """Build (or reuse) the image of ``environment_dir``; raise :class:`autoenv.errors.BuildError` naming why."""
        raise NotImplementedError(f"the {self.name} backend builds inside its trials")

    def is_built(self, key: str) -> bool:
        """Whether the image of content hash ``key`` is already built (a build would reuse it)."""
        return False

    def base_rootfs(self, dockerfile_text: str) -> Path | None:
        """The root filesystem of a Dockerfile's base image where this backend has it at hand; None otherwise."""
        return None

    def preflight(self, probe: RunProbe, *, builds: bool = True) -> bool:
        """Run the doctor's probes of this machine through ``probe``; True when the doctor's trials may start."""
        probe(
            Probe(
                name=f"backend {self.name}",
                probe=lambda: (
                    "not checked: the doctor knows the local and docker backends; the provider's own tools apply"
                ),
                need=Need.OPTIONAL,
            )
        )
        return False


def command_output(argv: list[str], timeout: float = 120) -> str:
    """A probe's command: its output, or RuntimeError with its last line when it fails."""
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd="/")
    if result.returncode != 0:
        lines = [ln for ln in (result.stderr + result.stdout).splitlines() if ln.strip()]
        raise RuntimeError(f"`{' '.join(argv)}` exited {result.returncode}: {lines[-1] if lines else ''}")
    return result.stdout.strip()
