"""Name -> sandbox backend: the one place a backend is chosen (see :mod:`autoenv.sandbox.backend`).

``local`` is autoenv's daemonless OCI backend (buildah + runc, :mod:`autoenv.sandbox.local.backend`); ``docker`` is
Harbor's Docker environment with offline no-network (:mod:`autoenv.sandbox.docker`); every other name is one of
Harbor's environment types (docker, podman, modal, daytona, e2b, ...) or a ``module:Class`` import path, passed
through to Harbor unchanged, so validation, calibration and the flywheel run the same on a laptop, a Docker
workstation or a cloud fleet.
"""

from __future__ import annotations

from functools import cache

from harbor.models.environment_type import EnvironmentType
from harbor.models.trial.config import EnvironmentConfig

from autoenv.errors import BackendError
from autoenv.sandbox.backend import Backend, Need, Probe, RunProbe, command_output

#: how Harbor loads the local backend (:mod:`autoenv.sandbox.local.backend`)
LOCAL_IMPORT_PATH = "autoenv.sandbox.local:LocalEnvironment"
#: Harbor's docker environment with no-network enforced by Docker itself where Harbor's
#: egress-control sidecar image cannot be pulled (see autoenv.sandbox.docker)
DOCKER_IMPORT_PATH = "autoenv.sandbox.docker:OfflineDockerEnvironment"


class UnknownBackend(BackendError):
    """No backend of that name (the message lists those there are)."""


class HarborBackend(Backend):
    """One of Harbor's environments, by type or by import path: it builds inside its trials."""

    def __init__(self, name: str, *, type: EnvironmentType | None = None, import_path: str | None = None):
        self.name, self.type, self.import_path = name, type, import_path

    def environment_config(self, **kwargs) -> EnvironmentConfig:
        if self.import_path is not None:
            return EnvironmentConfig(import_path=self.import_path, kwargs=kwargs)
        return EnvironmentConfig(type=self.type, kwargs=kwargs)


class DockerBackend(HarborBackend):
    """Harbor's Docker environment with offline no-network; the doctor checks the daemon and starts a trial."""

    trial_modes = (("no-network", "bash scripts/docker-setup.sh"),)

    def __init__(self) -> None:
        super().__init__("docker", import_path=DOCKER_IMPORT_PATH)

    def preflight(self, probe: RunProbe, *, builds: bool = True) -> bool:
        from autoenv.sandbox.docker import DISK_BOUND_FIX

        if not probe(Probe("docker daemon and compose", _docker, fix="bash scripts/docker-setup.sh")):
            return False
        probe(Probe("disk bound per sandbox", _docker_disk_bound, fix=DISK_BOUND_FIX, need=Need.OPTIONAL))
        return True


def _docker() -> str:
    version = command_output(["docker", "info", "--format", "{{.ServerVersion}}"], timeout=30)
    compose = command_output(["docker", "compose", "version", "--short"], timeout=30)
    return f"Docker {version}, Compose {compose}"


def _docker_disk_bound() -> str:
    from autoenv.sandbox.docker import disk_bound_problem

    if problem := disk_bound_problem():
        raise RuntimeError(f"none: what the agent writes is the host's disk; {problem}")
    return "each sandbox's writable layer has storage_mb (--storage-opt size=)"


def backend_names() -> list[str]:
    return ["local", *(t.value for t in EnvironmentType)]


@cache
def get_backend(name: str = "local") -> Backend:
    """The backend of a name or a ``module:Class`` import path; :class:`UnknownBackend` names those there are."""
    if name == "local":
        from autoenv.sandbox.local.backend import LocalBackend

        return LocalBackend()
    if name == "docker":
        return DockerBackend()
    if ":" in name:
        return HarborBackend(name, import_path=name)
    try:
        return HarborBackend(name, type=EnvironmentType(name))
    except ValueError:
        raise UnknownBackend(
            f"unknown environment {name!r}; choose one of: {', '.join(backend_names())}, or module:Class"
        ) from None


def environment_config(name: str = "local", **kwargs) -> EnvironmentConfig:
    """Harbor's EnvironmentConfig for a backend name or a ``module:Class`` import path."""
    return get_backend(name).environment_config(**kwargs)
