"""The training environment: a separate Python with torch, next to the main one.

The main package runs on Python 3.12 (Harbor's floor) and must stay light;
torch's 3.12 wheels on PyPI are multi-GB CUDA builds. Training therefore runs
in its own interpreter, ``.venv-train`` (made by ``scripts/setup-train.sh``,
Python 3.11 with the CPU torch wheel on machines without a GPU), and the main
process talks to it only through subprocesses and files (batch JSONL in,
checkpoint folder and a JSON result out). ``AUTOENV_TRAIN_PYTHON`` points at
another interpreter (a cluster's CUDA env, say) without changing any code.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

__all__ = ["TrainEnvMissing", "REPO_ROOT", "train_python", "train_env", "run_module"]

REPO_ROOT = Path(__file__).resolve().parents[2]
ENV_VAR = "AUTOENV_TRAIN_PYTHON"


class TrainEnvMissing(RuntimeError):
    """No interpreter with the training stack; the message says how to make one."""


def train_python(required: bool = True) -> Path | None:
    """The interpreter that runs training: ``$AUTOENV_TRAIN_PYTHON``, else ``<repo>/.venv-train/bin/python``."""
    override = os.environ.get(ENV_VAR)
    candidate = Path(override) if override else REPO_ROOT / ".venv-train" / "bin" / "python"
    if candidate.exists():
        return candidate
    if not required:
        return None
    where = f"{ENV_VAR}={override}" if override else str(candidate)
    raise TrainEnvMissing(
        f"the training environment is missing ({where} does not exist). Create it with "
        f"`bash {REPO_ROOT / 'scripts' / 'setup-train.sh'}` (Python 3.11 venv with torch, transformers and trl), "
        f"or set {ENV_VAR} to a Python that has them and autoenv importable."
    )


def train_env() -> dict[str, str]:
    """The environment for a training-env subprocess (this checkout's code first, no hub lookups)."""
    env = dict(os.environ)
    if (
        REPO_ROOT / "pyproject.toml"
    ).is_file():  # a source checkout; never put another Python's site-packages on the path
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.setdefault("HF_HUB_OFFLINE", "1")  # checkpoints are local folders; never wait on a hub
    return env


def run_module(
    module: str, args: list[str], *, timeout: float | None = None, log_path: Path | None = None
) -> dict[str, Any]:
    """Run ``python -m module args`` in the training env; its last stdout line is a JSON result.

    In a source checkout the repo root goes first on PYTHONPATH, so the worker
    runs this checkout's code even if the env's editable install points elsewhere. stderr (the
    worker's progress log) goes to ``log_path`` when given, else is captured
    and shown in the error on failure.
    """
    python = train_python()
    env = train_env()
    command = [str(python), "-m", module, *args]
    stderr_file = open(log_path, "a", encoding="utf-8") if log_path else None
    try:
        proc = subprocess.run(
            command, stdout=subprocess.PIPE, stderr=stderr_file or subprocess.PIPE, text=True, timeout=timeout, env=env
        )
    finally:
        if stderr_file:
            stderr_file.close()
    if proc.returncode != 0:
        if stderr_file is None:
            tail = (proc.stderr or "")[-4000:]
        else:
            tail = f"(log: {log_path})\n" + Path(log_path).read_text(encoding="utf-8", errors="replace")[-4000:]
        raise RuntimeError(f"{module} failed with exit code {proc.returncode}: {tail}")
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"{module} printed no JSON result; stdout ended with: {proc.stdout[-2000:]!r}")


def in_train_env() -> bool:
    """True when this interpreter can train itself (torch and transformers importable)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))
