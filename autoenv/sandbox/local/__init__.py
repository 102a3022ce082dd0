"""Daemonless Harbor environment: buildah images, runc (or runsc) containers."""

from autoenv.sandbox.local.environment import LocalEnvironment

__all__ = ["LocalEnvironment"]
