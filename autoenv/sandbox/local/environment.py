"""Harbor environment that runs each sandbox as an OCI container, without a daemon.

Load it in Harbor with ``import_path = "autoenv.sandbox.local:LocalEnvironment"``
(``harbor trial start -e autoenv.sandbox.local:LocalEnvironment``) or through
autoenv with ``--env local`` (the default). The Dockerfile is built by buildah
(:mod:`autoenv.sandbox.local.image`) and each trial runs in its own container
under runc, or gVisor's runsc with ``runtime="runsc"``
(:mod:`autoenv.sandbox.local.container`).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import uuid
from pathlib import Path, PurePosixPath

from harbor.environments.base import BaseEnvironment, ExecResult, SandboxBuildFailedError
from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.environments.definition import environment_content_hash
from harbor.models.trial.paths import EnvironmentPaths

from autoenv.sandbox.backend import IMAGE_RECORD
from autoenv.sandbox.local import oci, spares, sweep
from autoenv.sandbox.local.container import DEFAULT_STORAGE_MB, RUNTIMES, Container, ContainerConfig, pack_to
from autoenv.sandbox.local.host import SandboxError, runtime_problem
from autoenv.sandbox.local.image import BuildError, Image, build_image, cache_root
from autoenv.sandbox.transfer import TransferLimitExceeded, extract_one, extract_tree, record_limit, scratch_file

#: Environment every sandboxed process starts from, under the image's own ENV:
#: never the caller's, so API keys and the host's PATH do not leak into tasks.
BASE_ENV = {"PATH": oci.DEFAULT_PATH, "HOME": "/root", "TERM": "xterm", "HOSTNAME": "sandbox"}


class LocalEnvironment(BaseEnvironment):
    """A Harbor environment backed by buildah images and an OCI runtime (runc or runsc)."""

    def __init__(self, *args, runtime: str | None = None, **kwargs):
        self._runtime = runtime or os.environ.get("AUTOENV_RUNTIME", "runc")
        if self._runtime not in RUNTIMES:
            raise ValueError(f"runtime {self._runtime!r} is not one of {', '.join(RUNTIMES)}")
        self._container: Container | None = None
        self._image: Image | None = None
        super().__init__(*args, **kwargs)

    @staticmethod
    def type() -> str:
        return "local"

    @classmethod
    def preflight(cls) -> None:
        problem = runtime_problem(os.environ.get("AUTOENV_RUNTIME", "runc"))
        if problem:
            raise SystemExit(f"--env local cannot run here: {problem}")

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities(disable_internet=True)

    def _validate_definition(self):
        for compose in ("docker-compose.yaml", "docker-compose.yml", "compose.yaml"):
            if (self.environment_dir / compose).exists():
                raise ValueError(
                    f"{self.environment_dir / compose}: the local environment runs one container per task and does not "
                    f"support docker compose; use --env docker"
                )
        if not (self.environment_dir / "Dockerfile").exists() and not self.task_env_config.docker_image:
            raise FileNotFoundError(
                f"{self.environment_dir / 'Dockerfile'} not found and task.toml sets no docker_image"
            )

    # -- lifecycle -----------------------------------------------------------------

    async def start(self, force_build: bool) -> None:
        problem = runtime_problem(self._runtime)
        if problem:
            raise SandboxError(f"--env local cannot run here: {problem}")
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
        cpus = self._effective_cpus
        config = ContainerConfig(
            rootfs=self._image.rootfs,
            env={**BASE_ENV, **self._image.config.env, "HOSTNAME": self._hostname()},
            hostname=self._hostname(),
            network=not self._network_disabled,
            resources=oci.Resources(memory_mb=self._effective_memory_mb, cpus=float(cpus) if cpus else None),
            storage_mb=self._effective_storage_mb or DEFAULT_STORAGE_MB,
            runtime=self._runtime,
        )
        sweep.sweep_once_in_background()  # sandboxes whose reaper was killed, left by earlier processes
        if force_build:
            spares.discard(config)
        container = spares.take(config)  # a sandbox of this configuration started ahead, if there is one
        if container is None:
            container_id = f"{self.session_id[:40]}-{uuid.uuid4().hex[:8]}".replace("/", "-")
            container = Container(container_id, cache_root() / "sandboxes" / container_id, config)
            await asyncio.to_thread(container.start)
        self._container = container
        self._record_image()
        # Docker creates a missing WORKDIR when the container starts; Docker providers get the log
        # folders from their compose mounts, and Harbor's agents and verifier expect them to exist
        # and be writable by any task user. One exec, inside the sandbox (never a host path).
        paths = EnvironmentPaths.for_os(self.os)
        workdir = self.task_env_config.workdir or self._image.config.workdir
        made = await self._container.run(
            [
                "/bin/sh",
                "-c",
                f"mkdir -p {shlex.quote(workdir)} && "
                + self._ensure_dirs_command([paths.agent_dir, paths.verifier_dir, paths.artifacts_dir]),
            ],
            cwd="/",
        )
        if made.return_code != 0:
            raise SandboxError(f"could not prepare the sandbox's folders: {made.stderr.strip()[:500]}")
        await self._upload_environment_dir_after_start()

    def _hostname(self) -> str:
        name = "".join(c if c.isalnum() or c == "-" else "-" for c in self.environment_name)[:60].strip("-")
        return name or "sandbox"

    def _record_image(self) -> None:
        """Which image the trial ran on and what stood in for its base (never silent)."""
        assert self._image is not None
        record = {
            "image": self._image.config.image,
            "runtime": self._runtime,
            "substitutions": [s.model_dump() for s in self._image.config.substitutions],
            "sandboxes": [self._container.id] if self._container is not None else [],
        }
        path = self.trial_paths.trial_dir / IMAGE_RECORD
        try:
            # the agent's sandbox and the verifier's write one record: each adds its sandbox's id
            earlier = json.loads(path.read_text()).get("sandboxes", []) if path.is_file() else []
            record["sandboxes"] = [*earlier, *(i for i in record["sandboxes"] if i not in earlier)]
            self.trial_paths.trial_dir.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(record, indent=2))
        except (OSError, ValueError):
            pass
        for sub in self._image.config.substitutions:
            self.logger.info(f"base image stand-in: {sub.note}")

    async def stop(self, delete: bool):
        if self._container is None:
            return
        container, self._container = self._container, None
        # every process is dead when stop returns; the reaper removes the rest in the background
        await asyncio.to_thread(container.stop, wait=False)

    # -- commands ------------------------------------------------------------------

    def _require(self) -> Container:
        if self._container is None:
            raise SandboxError("local environment is not started")
        return self._container

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        container = self._require()
        assert self._image is not None
        user = self._resolve_user(user)
        if user is None:
            user = self._image.config.user
        result = await container.run(
            ["bash", "-c", command],
            cwd=cwd or self.task_env_config.workdir or self._image.config.workdir,
            env=self._merge_env(env) or {},
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

    async def exec_argv(
        self, argv: list[str], *, user: str | int | None = None, timeout_sec: int | None = None
    ) -> ExecResult:
        """``argv`` started directly, no shell of the image's in between (:class:`autoenv.sandbox.toolbox.RawExec`)."""
        container = self._require()
        assert self._image is not None
        user = self._resolve_user(user)
        result = await container.run(
            argv,
            cwd="/",
            env=self._merge_env(None) or {},
            user=self._image.config.user if user is None else user,
            timeout=timeout_sec,
        )
        return ExecResult(stdout=result.stdout, stderr=result.stderr, return_code=result.return_code)

    # -- files ---------------------------------------------------------------------
    # Tar streams through the sandbox's exec helper, made and read by the toolbox's busybox: no sandbox path is
    # ever resolved on the host. What comes out streams to a file within bounds (autoenv.sandbox.transfer: bytes,
    # files, depth, seconds; past one the agent's failure) and is extracted with tarfile's "data" filter (no links
    # out), sparse, into a staging folder published only when complete.

    async def upload_file(self, source_path: Path | str, target_path: str):
        target = PurePosixPath(target_path)
        with scratch_file(self.trial_paths.trial_dir) as archive:
            await asyncio.to_thread(pack_to, archive, Path(source_path), target.name)
            await self._require().put_archive(archive, str(target.parent))

    async def upload_dir(self, source_dir: Path | str, target_dir: str):
        with scratch_file(self.trial_paths.trial_dir) as archive:
            await asyncio.to_thread(pack_to, archive, Path(source_dir), ".")
            await self._require().put_archive(archive, target_dir)

    async def download_file(self, source_path: str, target_path: Path | str):
        # follow links inside the sandbox (its own root), never on the host
        target = Path(target_path)
        with scratch_file(target) as archive:
            await self._collect(source_path, archive, follow=True)
            await asyncio.to_thread(extract_one, archive, target)

    async def download_dir(self, source_dir: str, target_dir: Path | str):
        target = Path(target_dir)
        with scratch_file(target) as archive:
            await self._collect(source_dir.rstrip("/") + "/.", archive, follow=False)
            await asyncio.to_thread(extract_tree, archive, target)

    async def _collect(self, source: str, archive: Path, *, follow: bool) -> None:
        try:
            await self._require().stream_archive(source, archive, follow=follow)
        except TransferLimitExceeded as exc:
            record_limit(self.trial_paths.trial_dir, str(exc))
            raise
