"""Harbor environment that runs tasks without a container engine.

Load it in Harbor with ``import_path = "autoenv.sandbox.local:LocalEnvironment"``
(``harbor run --environment-import-path ...``) or through autoenv with
``--env local`` (the default). The Dockerfile is replayed into a cached overlay
layer (see :mod:`autoenv.sandbox.local.image`) and each trial gets its own
namespace sandbox on top of it (see :mod:`autoenv.sandbox.local.namespace`).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from pathlib import Path

from harbor.environments.base import BaseEnvironment, ExecResult, SandboxBuildFailedError
from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.environments.definition import environment_content_hash
from harbor.models.trial.paths import EnvironmentPaths

from autoenv.sandbox.local.image import BuildError, Image, build_image, cache_root
from autoenv.sandbox.local.namespace import BASE_ENV, Limits, Sandbox


class LocalEnvironment(BaseEnvironment):
    """A Harbor environment backed by Linux namespaces and overlayfs."""

    def __init__(self, *args, mask_paths: list[str] | None = None, **kwargs):
        self._extra_masks = [Path(p) for p in (mask_paths or [])]
        self._sandbox: Sandbox | None = None
        self._image: Image | None = None
        super().__init__(*args, **kwargs)

    @staticmethod
    def type() -> str:
        return "local"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities(disable_internet=True)

    def _validate_definition(self):
        for compose in ("docker-compose.yaml", "docker-compose.yml", "compose.yaml"):
            if (self.environment_dir / compose).exists():
                raise ValueError(
                    f"{self.environment_dir / compose}: the local environment runs one container per task and does not support docker compose; use --env docker"
                )
        if not (self.environment_dir / "Dockerfile").exists() and not self.task_env_config.docker_image:
            raise FileNotFoundError(f"{self.environment_dir / 'Dockerfile'} not found and task.toml sets no docker_image")

    # -- lifecycle -----------------------------------------------------------------

    def _mask_paths(self) -> list[Path]:
        """Host paths hidden inside the sandbox: the task (its solution and tests),
        the trial outputs, other sandboxes, plus anything configured."""
        masks = [self.environment_dir.parent, self.trial_paths.trial_dir.parent, cache_root() / "sandboxes"]
        masks += [Path(p) for p in os.environ.get("AUTOENV_MASK_PATHS", "").split(":") if p]
        return [m.resolve() for m in masks + self._extra_masks]

    async def start(self, force_build: bool) -> None:
        key = environment_content_hash(self.environment_dir, docker_image=self.task_env_config.docker_image)
        try:
            self._image = await build_image(
                self.environment_dir,
                key=key,
                docker_image=self.task_env_config.docker_image,
                timeout_sec=self.task_env_config.build_timeout_sec,
                force=force_build,
            )
        except BuildError as exc:
            raise SandboxBuildFailedError(str(exc)) from exc
        root = cache_root() / "sandboxes" / f"{self.session_id}-{uuid.uuid4().hex[:6]}"
        cpus = self._effective_cpus
        self._sandbox = Sandbox(
            root=root,
            image_layer=self._image.layer,
            network=not self._network_disabled,
            hostname=self.environment_name[:60] or "sandbox",
            mask_paths=self._mask_paths(),
            limits=Limits(memory_mb=self._effective_memory_mb, cpus=float(cpus) if cpus else None),
        )
        self._sandbox.spawn()
        await asyncio.to_thread(self._sandbox.wait_ready)
        # Docker providers get these from their compose mounts; Harbor's agents
        # and verifier expect them to exist and be writable by any task user.
        paths = EnvironmentPaths.for_os(self.os)
        await self.ensure_dirs([paths.agent_dir, paths.verifier_dir, paths.artifacts_dir])
        await self._upload_environment_dir_after_start()

    async def stop(self, delete: bool):
        if self._sandbox is None:
            return
        sandbox, self._sandbox = self._sandbox, None
        await asyncio.to_thread(sandbox.stop)
        if delete:
            await asyncio.to_thread(shutil.rmtree, sandbox.root, True)

    # -- commands ------------------------------------------------------------------

    def _require(self) -> Sandbox:
        if self._sandbox is None:
            raise RuntimeError("local environment is not started")
        return self._sandbox

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        sandbox = self._require()
        assert self._image is not None
        image = self._image.config
        user = self._resolve_user(user)
        if user is None:
            user = image.user
        merged_env = {**BASE_ENV, **image.env, **(self._merge_env(env) or {})}
        result = await sandbox.run(
            command,
            cwd=cwd or self.task_env_config.workdir or image.workdir,
            env=merged_env,
            user=user,
            timeout=timeout_sec,
        )
        callback = self._output_callback()
        if callback is not None:
            if result.stdout:
                await callback(result.stdout, "stdout")
            if result.stderr:
                await callback(result.stderr, "stderr")
        return ExecResult(stdout=result.stdout, stderr=result.stderr, return_code=result.return_code)

    # -- files ---------------------------------------------------------------------
    # The sandbox's root is reachable from the host as /proc/<init>/root, so
    # transfers are plain copies with no tar round-trip through a shell.

    async def upload_file(self, source_path: Path | str, target_path: str):
        target = self._require().host_path(target_path)
        await asyncio.to_thread(_copy_file, Path(source_path), target)

    async def upload_dir(self, source_dir: Path | str, target_dir: str):
        target = self._require().host_path(target_dir)
        await asyncio.to_thread(shutil.copytree, Path(source_dir), target, symlinks=True, dirs_exist_ok=True)

    async def download_file(self, source_path: str, target_path: Path | str):
        source = self._require().host_path(source_path)
        if not source.is_file():
            raise FileNotFoundError(f"{source_path} not found in the sandbox")
        await asyncio.to_thread(_copy_file, source, Path(target_path))

    async def download_dir(self, source_dir: str, target_dir: Path | str):
        source = self._require().host_path(source_dir)
        if not source.is_dir():
            raise FileNotFoundError(f"{source_dir} not found in the sandbox")
        await asyncio.to_thread(shutil.copytree, source, Path(target_dir), symlinks=True, dirs_exist_ok=True)


def _copy_file(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)
