"""A Harbor ``TrialConfig`` for trainers that run Harbor trials themselves (SkyRL's Harbor generator, prime-rl,
``harbor trial start -c``): the environment is autoenv's local sandbox, loaded by import path.

Such trainers take a ``TrialConfig`` template and fill in the task (and their agent and model) per rollout; what
autoenv contributes is the environment (daemonless, Docker's defaults, the exec helper) and tasks that grade in a
fresh sandbox (``[verifier] environment_mode = "separate"``, which the proposer's tasks set).
"""

from __future__ import annotations

from pathlib import Path

import yaml
from harbor.models.trial.config import AgentConfig, TaskConfig, TrialConfig

from autoenv.sandbox.backends import environment_config


def harbor_trial_config(task: Path, *, trials_dir: Path, env: str = "local", agent: str = "oracle") -> TrialConfig:
    """The config of one trial of ``task`` on autoenv's ``env`` backend (a template: trainers replace the task)."""
    return TrialConfig(
        task=TaskConfig(path=task.resolve()),
        trials_dir=trials_dir.resolve(),
        agent=AgentConfig(name=agent),
        environment=environment_config(env),
    )


def write_trial_config(config: TrialConfig, path: Path) -> Path:
    """``config`` as YAML (what ``harbor trial start -c`` and SkyRL's ``harbor_trial_config`` read)."""
    data = config.model_dump(mode="json", exclude_defaults=True)
    header = (
        "# A Harbor TrialConfig (harbor.models.trial.config) written by `autoenv export-harbor --trial-config`.\n"
        "# Run it: harbor trial start -c THIS_FILE [-p ANOTHER_TASK]; SkyRL: the harbor_trial_config group.\n"
    )
    path.write_text(header + yaml.safe_dump(data, sort_keys=False))
    return path


__all__ = ["harbor_trial_config", "write_trial_config"]
