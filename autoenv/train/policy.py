"""Policy checkpoints: a Hugging Face ``save_pretrained`` folder plus ``autoenv_policy.json``.

The metadata file is what ties a checkpoint to the flywheel: its version, the
checkpoint it was trained from, and the run/step/batch that produced it. The
store records versions on every rollout and task (``policy_version``) and the
checkpoint path on every training step, so "which weights produced this
rollout" is a join, and a checkpoint folder alone still says where it came from.
Checkpoints are named ``v{N}`` under the trainer's out dir, which is where the
flywheel looks for the policy of version N.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = [
    "POLICY_META",
    "checkpoint_dir",
    "install_initial_policy",
    "read_policy_meta",
    "write_policy_meta",
    "policy_version",
    "publish_dir",
]

POLICY_META = "autoenv_policy.json"


def checkpoint_dir(out_dir: Path | str, version: int) -> Path:
    return Path(out_dir) / f"v{version}"


def read_policy_meta(policy_dir: Path | str) -> dict[str, Any] | None:
    path = Path(policy_dir) / POLICY_META
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def write_policy_meta(policy_dir: Path | str, *, version: int, **fields: Any) -> dict[str, Any]:
    meta = {"version": version, "created_at": datetime.now(UTC).isoformat(), **fields}
    path = Path(policy_dir) / POLICY_META
    tmp = path.with_name(POLICY_META + ".tmp")
    tmp.write_text(json.dumps(meta, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return meta


def policy_version(policy_dir: Path | str | None, default: int = 0) -> int:
    """The version a checkpoint declares, else the ``vN`` in its name, else ``default``."""
    if policy_dir is None:
        return default
    meta = read_policy_meta(policy_dir)
    if meta and isinstance(meta.get("version"), int):
        return meta["version"]
    name = Path(policy_dir).name
    if name.startswith("v") and name[1:].isdigit():
        return int(name[1:])
    return default


def publish_dir(final: Path | str, fill: Callable[[Path], Any]) -> Path:
    """Make the folder ``final`` whole or not at all: ``fill`` writes it aside, then it is renamed into place.

    A crash mid-save must not leave a half checkpoint that a flywheel would then train or serve; a rerun replaces
    the earlier result.
    """
    final = Path(final)
    tmp = final.with_name(f".{final.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    fill(tmp)
    if final.exists():
        shutil.rmtree(final)
    tmp.rename(final)
    return final


def install_initial_policy(source: Path | str, out_dir: Path | str) -> Path:
    """Make ``source`` (a ``save_pretrained`` folder) the policy v0 of the trainer folder ``out_dir``.

    Copied whole (aside, then renamed), so the run owns its v0 even if ``source`` changes later; its metadata
    keeps where it came from (``init_from``) and what made it (``backend``: ``sft`` after a Cold Start). A run
    resumed with the same source finds its v0 in place; a v0 from another source is an error, since two starting
    points in one run would make its curve meaningless.
    """
    from autoenv.errors import TaskError

    source = Path(source).resolve()
    if not (source / "config.json").is_file():
        raise TaskError(f"--init-policy {source}: not a save_pretrained model folder (no config.json)")
    target = checkpoint_dir(out_dir, 0)
    if target.exists():
        meta = read_policy_meta(target) or {}
        if meta.get("init_from") == str(source):
            return target
        raise TaskError(
            f"{target} already holds a policy v0 from {meta.get('init_from') or 'another start'}; "
            f"start a new --run to begin from {source}"
        )
    fields = {k: v for k, v in (read_policy_meta(source) or {}).items() if k not in {"version", "created_at"}}

    def fill(tmp: Path) -> None:
        shutil.copytree(source, tmp, dirs_exist_ok=True)
        write_policy_meta(tmp, version=0, **{**fields, "init_from": str(source)})

    return publish_dir(target, fill)
