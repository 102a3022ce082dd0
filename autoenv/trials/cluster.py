"""Ray, for work that one machine cannot hold: rollouts (:mod:`autoenv.rollout.ray_pool`) and dataset audits
(:mod:`autoenv.validate.audit`). Every node needs autoenv installed and the task folders at the same paths."""

from __future__ import annotations

from typing import Any


def ray_init(address: str, num_cpus: int | None = None) -> Any:
    """Ray, connected to ``address`` (``local``: an in-process cluster) unless it already is."""
    import ray

    if not ray.is_initialized():
        if address == "local":
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
        else:
            ray.init(address=address, log_to_driver=False)
    return ray
