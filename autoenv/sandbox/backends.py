"""Name -> Harbor environment configuration.

``local`` is autoenv's daemonless OCI backend (buildah + runc); ``docker`` is Harbor's
Docker environment with offline no-network (:mod:`autoenv.sandbox.docker`); every other name is one of
Harbor's environment types (docker, podman, modal, daytona, e2b, ...) and is
passed through to Harbor unchanged, so validation, calibration and the
flywheel run the same on a laptop, a Docker workstation or a cloud fleet.
"""

from __future__ import annotations

from harbor.models.environment_type import EnvironmentType
from harbor.models.trial.config import EnvironmentConfig

from autoenv.errors import BackendError

LOCAL_IMPORT_PATH = "autoenv.sandbox.local:LocalEnvironment"
#: Harbor's docker environment with no-network enforced by Docker itself where Harbor's
#: egress-control sidecar image cannot be pulled (see autoenv.sandbox.docker)
DOCKER_IMPORT_PATH = "autoenv.sandbox.docker:OfflineDockerEnvironment"


class UnknownBackend(BackendError):
    """No backend of that name (the message lists those there are)."""


def backend_names() -> list[str]:
    return ["local", *(t.value for t in EnvironmentType)]


def environment_config(name: str = "local", **kwargs) -> EnvironmentConfig:
    """Harbor's EnvironmentConfig for a backend name or a ``module:Class`` import path."""
    if name == "local":
        return EnvironmentConfig(import_path=LOCAL_IMPORT_PATH, kwargs=kwargs)
    if name == "docker":
        return EnvironmentConfig(import_path=DOCKER_IMPORT_PATH, kwargs=kwargs)
    if ":" in name:
        return EnvironmentConfig(import_path=name, kwargs=kwargs)
    try:
        return EnvironmentConfig(type=EnvironmentType(name), kwargs=kwargs)
    except ValueError:
        raise UnknownBackend(
            f"unknown environment {name!r}; choose one of: {', '.join(backend_names())}, or module:Class"
        ) from None
