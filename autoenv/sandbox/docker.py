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
(see ``_image_build_locks``), and discards a trial's containers without Docker's 10 s stop grace
(see ``DISCARD_TIMEOUT_SEC``).

Load it as ``--env docker`` in autoenv, or in Harbor by import path:
``harbor trial start -e autoenv.sandbox.docker:OfflineDockerEnvironment``.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Sequence
from pathlib import Path

from harbor.constants import MAIN_SERVICE_NAME
from harbor.environments.base import ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.environments.docker import docker as harbor_docker
from harbor.environments.docker.docker import DockerEnvironment
from harbor.models.task.config import NetworkMode, NetworkPolicy

NO_NETWORK_COMPOSE = Path(harbor_docker.__file__).with_name("docker-compose-no-network.yaml")


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

    @property
    def _docker_compose_paths(self) -> list[Path]:
        paths = list(super()._docker_compose_paths)
        if self._static_no_network:
            paths.append(NO_NETWORK_COMPOSE)
        return paths


def _all_no_network(policy: NetworkPolicy | None, phases: Sequence[NetworkPolicy]) -> bool:
    policies = [policy, *phases]
    return policy is not None and all(p is not None and p.network_mode == NetworkMode.NO_NETWORK for p in policies)
