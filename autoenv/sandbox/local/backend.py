"""The local backend behind the one seam (:class:`autoenv.sandbox.backend.Backend`): buildah images, runc sandboxes.

It builds a task's image before any trial (validation reports a broken Dockerfile line without one and scans the
image the agent starts in), has base images at hand (their stand-ins where no registry answers), hides host paths
from a sandbox, and has the doctor check this machine before every run (:mod:`.preflight`).
"""

from __future__ import annotations

from pathlib import Path

from harbor.models.trial.config import EnvironmentConfig

from autoenv.sandbox.backend import Backend, BuiltImage, RunProbe
from autoenv.sandbox.local import image, preflight

#: how Harbor loads the environment (``autoenv.sandbox.backends.LOCAL_IMPORT_PATH``)
IMPORT_PATH = "autoenv.sandbox.local:LocalEnvironment"


class LocalBackend(Backend):
    name = "local"
    builds_images = True
    masks_paths = True
    checked_before_runs = True
    trial_modes = preflight.TRIAL_MODES

    def environment_config(self, **kwargs) -> EnvironmentConfig:
        return EnvironmentConfig(import_path=IMPORT_PATH, kwargs=kwargs)

    async def build(
        self, environment_dir: Path, *, key: str, docker_image: str | None, timeout_sec: float, force: bool = False
    ) -> BuiltImage:
        return await image.build_image(
            environment_dir, key=key, docker_image=docker_image, timeout_sec=timeout_sec, force=force
        )

    def is_built(self, key: str) -> bool:
        return (image.images_dir() / f"{key}-v{image.BUILDER_VERSION}" / "image.json").exists()

    def base_rootfs(self, dockerfile_text: str) -> Path | None:
        return image.base_rootfs(dockerfile_text)

    def preflight(self, probe: RunProbe, *, builds: bool = True) -> bool:
        return preflight.preflight(probe, builds=builds)
