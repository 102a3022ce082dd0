"""Harbor's Docker environment, with ``no-network`` enforced where Harbor's egress control cannot run.

Harbor enforces ``network_mode = "no-network"`` on Docker with an egress-control
sidecar whose image is pinned by digest and pulled from a registry. Offline
(this project's machines, CI, air-gapped clusters) that image cannot be had, and
Harbor then refuses every no-network task. This subclass changes one thing: a
task whose network policy is ``no-network`` for the whole trial (no phase asks
for more) runs with Docker's own ``network_mode: none`` (Harbor's
``docker-compose-no-network.yaml``), which gives the container loopback only.
Everything else (build, exec, transfers, compose) is Harbor's code unchanged;
tasks with allow-lists or network switches between phases still need Harbor's
sidecar and are refused as before. It also keeps Harbor's image-build locks per event loop
(see ``_image_build_locks``), discards a trial's containers without Docker's 10 s stop grace
(see ``DISCARD_TIMEOUT_SEC``), and copies files out of a sandbox as a bounded stream (``docker cp
CONTAINER:PATH -``, the daemon's own tar, within :class:`autoenv.sandbox.transfer.TransferLimits`; past a
bound the trial is the agent's failure) where Harbor's ``docker compose cp`` had no bound at all. Harbor's
Docker environment ignores the task's ``storage_mb``; here every sandbox's writable layer gets a size
(``storage_opt: size``, the task's ``storage_mb`` or :data:`DEFAULT_STORAGE_MB`) where the daemon can
bound it (:func:`disk_bound_problem`: overlay2 on xfs mounted with ``pquota``, btrfs, zfs, ...). On a
daemon that cannot (overlay2 on ext4, the common case) the Docker backend has no disk bound, and
``autoenv doctor --env docker`` says so.

Load it as ``--env docker`` in autoenv, or in Harbor by import path:
``harbor trial start -e autoenv.sandbox.docker:OfflineDockerEnvironment``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import subprocess
import weakref
from collections.abc import Sequence
from pathlib import Path

from harbor.constants import MAIN_SERVICE_NAME
from harbor.environments.base import ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.environments.docker import docker as harbor_docker
from harbor.environments.docker.docker import DockerEnvironment
from harbor.models.task.config import NetworkMode, NetworkPolicy

from autoenv.sandbox.local.container import DEFAULT_STORAGE_MB
from autoenv.sandbox.transfer import (
    TransferLimitExceeded,
    extract_one,
    extract_tree,
    record_limit,
    scratch_file,
    stream_command,
)

NO_NETWORK_COMPOSE = Path(harbor_docker.__file__).with_name("docker-compose-no-network.yaml")

#: How to give Docker a disk bound per container where its data root is on ext4 (overlay2 there refuses
#: ``--storage-opt size=``): what the doctor and the README say.
DISK_BOUND_FIX = (
    "put Docker's data-root on xfs mounted with pquota (e.g. a loop image: mkfs.xfs IMG; "
    "mount -o loop,pquota IMG /var/lib/docker-xfs; dockerd --data-root /var/lib/docker-xfs)"
)


@functools.cache
def disk_bound_problem() -> str | None:
    """Why this Docker daemon cannot bound a container's writable layer, or None when it can.

    Asked of the daemon itself: a container created with ``--storage-opt size=`` from an image it holds
    (and removed at once). overlay2 accepts it only on xfs with project quotas; on ext4 it refuses."""
    try:
        driver = subprocess.run(
            ["docker", "info", "--format", "{{.Driver}} on {{json .DriverStatus}}"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        images = subprocess.run(["docker", "images", "-q"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"docker does not answer: {exc}"
    if driver.returncode != 0 or not images.stdout.split():
        return f"no Docker daemon with an image answers `docker info` ({driver.stderr.strip()[-200:]})"
    name, _, status = driver.stdout.strip().partition(" on ")
    backing = next((v for k, v in json.loads(status or "[]") if k == "Backing Filesystem"), "?")
    created = subprocess.run(
        ["docker", "create", "--network", "none", "--storage-opt", "size=64m", images.stdout.split()[0], "true"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    if created.returncode == 0:
        subprocess.run(["docker", "rm", "-f", created.stdout.strip()], capture_output=True, timeout=60)
        return None
    refusal = (created.stderr.strip().splitlines() or ["?"])[-1]
    return f"storage driver {name} on {backing} refuses --storage-opt size= ({refusal[:200]})"


class OfflineDockerEnvironment(DockerEnvironment):
    """DockerEnvironment whose static no-network policy is Docker's ``network_mode: none``."""

    def __init__(
        self,
        *args,
        network_policy: NetworkPolicy | None = None,
        phase_network_policies: Sequence[NetworkPolicy] = (),
        **kwargs,
    ):
        # decided before Harbor's __init__, which checks the capabilities against the policy
        self._static_no_network = _all_no_network(network_policy, phase_network_policies)
        super().__init__(*args, network_policy=network_policy, phase_network_policies=phase_network_policies, **kwargs)

    @staticmethod
    def _requires_egress_control(
        *, startup_network_policy: NetworkPolicy, phase_network_policies: Sequence[NetworkPolicy]
    ) -> bool:
        if _all_no_network(startup_network_policy, phase_network_policies):
            return False  # network_mode: none does it, no sidecar needed
        return DockerEnvironment._requires_egress_control(
            startup_network_policy=startup_network_policy, phase_network_policies=phase_network_policies
        )

    #: Harbor keeps one build lock per image in a class-level dict; an asyncio.Lock belongs to the
    #: event loop that first waited on it, so a second ``asyncio.run`` in the same process (validation
    #: after a batch of trials) failed with "bound to a different event loop". One dict per loop.
    _build_locks_by_loop: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    #: Seconds ``docker compose down`` waits after SIGTERM before it kills. Harbor's services run
    #: ``sh -c "sleep infinity"`` as PID 1, which the kernel shields from SIGTERM, so Docker's default
    #: grace (10 s) was spent in full at every teardown: twice a trial (the agent's sandbox and the
    #: verifier's), 20 of a trial's ~30 s. ``down`` discards the project (its outputs were downloaded
    #: before), so nothing in it has state left to save; ``stop`` (kept containers, one service stopped
    #: mid-trial) keeps Docker's grace.
    DISCARD_TIMEOUT_SEC = 0

    async def _run_docker_compose_command(self, command: list[str], *args, **kwargs) -> ExecResult:
        if command[:1] == ["down"] and "--timeout" not in command and "-t" not in command:
            command = ["down", "--timeout", str(self.DISCARD_TIMEOUT_SEC), *command[1:]]
        return await super()._run_docker_compose_command(command, *args, **kwargs)

    async def _write_resources_compose_file(self) -> Path:
        """Harbor's resources override, with the writable layer's size where the daemon can bound it."""
        path = await super()._write_resources_compose_file()
        if await asyncio.to_thread(disk_bound_problem) is None:
            compose = json.loads(path.read_text())
            size = self._effective_storage_mb or DEFAULT_STORAGE_MB
            compose["services"][MAIN_SERVICE_NAME]["storage_opt"] = {"size": f"{size}m"}
            path.write_text(json.dumps(compose, indent=2))
        return path

    @property
    def _image_build_locks(self) -> dict[str, asyncio.Lock]:
        return self._build_locks_by_loop.setdefault(asyncio.get_running_loop(), {})

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        caps = super().capabilities
        if self._static_no_network:
            caps = caps.model_copy(update={"disable_internet": True})
        return caps

    async def exec_argv(
        self, argv: list[str], *, user: str | int | None = None, timeout_sec: int | None = None
    ) -> ExecResult:
        """``argv`` started by ``docker compose exec`` directly, without the image's ``bash -c`` that ``exec``
        wraps commands in (:class:`autoenv.sandbox.toolbox.RawExec`)."""
        command = ["exec"]
        resolved = self._resolve_user(user)
        if resolved is not None:
            command += ["-u", str(resolved)]
        command += [MAIN_SERVICE_NAME, *argv]
        return await self._run_docker_compose_command(command, check=False, timeout_sec=timeout_sec)

    # -- files out of the sandbox ------------------------------------------------------
    # Harbor's `docker compose cp` writes whatever the container holds onto the host: a 20 GB sparse file the
    # agent left becomes 20 GB of the host's disk, 150k files take minutes. Here the daemon's tar stream
    # (`docker cp CONTAINER:PATH -`: made by the daemon, never by the sandbox's own sh or tar, which the agent
    # may have replaced) goes to a scratch file within bounds and is extracted sparse, as on the local backend.

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        await self.service_download_file(source_path, target_path)

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        await self.service_download_dir(source_dir, target_dir)

    async def service_download_file(
        self, source_path: str, target_path: Path | str, *, service: str | None = None
    ) -> None:
        target = Path(target_path)
        with scratch_file(target) as archive:
            # -L: a link is followed inside the container (the daemon resolves it in the container's root)
            await self._collect(service, source_path, archive, follow=True)
            await asyncio.to_thread(extract_one, archive, target)

    async def service_download_dir(
        self, source_dir: str, target_dir: Path | str, *, service: str | None = None
    ) -> None:
        target = Path(target_dir)
        with scratch_file(target) as archive:
            await self._collect(service, source_dir.rstrip("/") + "/.", archive, follow=False)
            await asyncio.to_thread(extract_tree, archive, target)

    async def _collect(self, service: str | None, source: str, archive: Path, *, follow: bool) -> None:
        container = await self._container_of(service or MAIN_SERVICE_NAME)
        argv = self._engine_cmd("cp", *(["-L"] if follow else []), f"{container}:{source}", "-")
        try:
            message = await stream_command(argv, archive, f"{source} in the sandbox")
        except TransferLimitExceeded as exc:
            record_limit(self.trial_paths.trial_dir, str(exc))
            raise
        except RuntimeError as exc:
            if "Could not find the file" in str(exc) or "No such container:path" in str(exc):
                raise FileNotFoundError(f"{source} not found in the sandbox") from exc
            raise
        if message:
            self.logger.debug(f"docker cp {source}: {message}")

    async def _container_of(self, service: str) -> str:
        """The id of this trial's container for ``service`` (compose labels it with its project and service)."""
        project = harbor_docker._sanitize_docker_compose_project_name(self.session_id)
        process = await asyncio.create_subprocess_exec(
            *self._engine_cmd(
                "ps", "-a", "-q", "--no-trunc",
                "--filter", f"label=com.docker.compose.project={project}",
                "--filter", f"label=com.docker.compose.service={service}",
            ),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await asyncio.wait_for(process.communicate(), timeout=60)
        ids = out.decode().split()
        if process.returncode != 0 or not ids:
            raise RuntimeError(
                f"no container of service {service!r} in compose project {project!r}: {err.decode()[-500:].strip()}"
            )
        return ids[0]

    @property
    def _docker_compose_paths(self) -> list[Path]:
        paths = list(super()._docker_compose_paths)
        if self._static_no_network:
            paths.append(NO_NETWORK_COMPOSE)
        return paths


def _all_no_network(policy: NetworkPolicy | None, phases: Sequence[NetworkPolicy]) -> bool:
    policies = [policy, *phases]
    return policy is not None and all(p is not None and p.network_mode == NetworkMode.NO_NETWORK for p in policies)
