"""Docker-less Harbor environment: namespaces + overlayfs on the host system."""

from autoenv.sandbox.local.environment import LocalEnvironment

__all__ = ["LocalEnvironment"]
