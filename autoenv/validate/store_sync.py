"""Verdicts into the flywheel store as they are recorded: a hook for :func:`autoenv.validate.cache.register_store_hook`.

Above the reports it reads (validation, calibration, r_P) and the cache it hooks into, so the cache itself knows
no report class.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from autoenv.validate.cache import Kind, StoreHook, latest_record
from autoenv.validate.calibration import CalibrationReport
from autoenv.validate.reward import proposer_reward
from autoenv.validate.validation import ValidationReport

__all__ = ["store_hook"]


def store_hook(store: Any) -> StoreHook:
    """A hook writing verdicts into the flywheel store's ``tasks`` table (autoenv.store.db.Store).

    Usage: ``register_store_hook(store_hook(Store(path)))``. The row is keyed
    by the same content hash as the record; r_P is recomputed from the task's
    recorded validation and calibration so the store always holds the value
    :func:`autoenv.validate.reward.proposer_reward` gives.
    """

    def hook(kind: Kind, task_dir: Path, record: BaseModel) -> None:
        content_hash = getattr(record, "content_hash", "")
        if not content_hash:
            return
        validation = (
            record
            if isinstance(record, ValidationReport)
            else latest_record(task_dir, "validation", content_hash, ValidationReport)
        )
        calibration = (
            record
            if isinstance(record, CalibrationReport)
            else latest_record(task_dir, "calibration", content_hash, CalibrationReport)
        )
        values: dict[str, Any] = {
            "hash": content_hash,
            "name": Path(task_dir).name,
            "path": str(Path(task_dir).resolve()),
        }
        if validation is not None:
            failed = validation.failed
            values |= {
                "valid": validation.valid,
                "failed_check": failed[0].name if failed else None,
                "validation": validation.model_dump(mode="json"),
            }
        if calibration is not None:
            values |= {
                "calibrated": calibration.accepted,
                "pass_rate": calibration.pass_rate,
                "calibration": calibration.model_dump(mode="json", exclude={"rollouts"}),
            }
        values["proposer_reward"] = proposer_reward(validation, calibration)
        store.upsert_task(**values)

    return hook
