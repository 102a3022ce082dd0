"""Verdicts keyed by what a task *is*, so no task is validated twice.

A validation costs several sandboxed trials and a calibration dozens, so each
result is stored next to the task (``<task>/.autoenv/validation.json`` and
``calibration.json``) under the content hash of the whole task folder and the
settings that produced it. Any edit to any file of the task changes the hash
and invalidates the record; re-running with the same settings is a cache hit.

The task store (autoenv.store) subscribes with :func:`register_store_hook`
and receives every record as it is saved; :func:`autoenv.validate.store_sync.store_hook` is the ready-made
subscriber for autoenv.store.db.Store (``register_store_hook(store_hook(store))``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError
from sqlalchemy.exc import SQLAlchemyError

from autoenv.taskfmt.hashing import task_hash

log = logging.getLogger(__name__)

RECORD_DIR = ".autoenv"
SCHEMA_VERSION = 1

Kind = Literal["validation", "calibration"]
R = TypeVar("R", bound=BaseModel)


def task_content_hash(task_dir: Path | str) -> str:
    """The task's identity: the same hash the store and deduplication key tasks by."""
    root = Path(task_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: not a task directory")
    return task_hash(root)


class RecordFile(BaseModel):
    """On-disk format of ``.autoenv/<kind>.json``: the latest record per settings key."""

    schema_version: int = SCHEMA_VERSION
    kind: Kind
    records: dict[str, dict] = Field(default_factory=dict)


def record_path(task_dir: Path | str, kind: Kind) -> Path:
    return Path(task_dir) / RECORD_DIR / f"{kind}.json"


def _read(task_dir: Path, kind: Kind) -> RecordFile:
    path = record_path(task_dir, kind)
    if not path.is_file():
        return RecordFile(kind=kind)
    try:
        data = RecordFile.model_validate_json(path.read_text())
    except (ValidationError, OSError, ValueError) as exc:
        log.warning("%s: unreadable record file, ignoring it (%s)", path, str(exc).splitlines()[0])
        return RecordFile(kind=kind)
    if data.schema_version != SCHEMA_VERSION or data.kind != kind:
        return RecordFile(kind=kind)
    return data


def load_record(task_dir: Path | str, kind: Kind, key: str, content_hash: str, model: type[R]) -> R | None:
    """The stored record for ``key`` if it was made from exactly this task content."""
    raw = _read(Path(task_dir), kind).records.get(key)
    if raw is None or raw.get("content_hash") != content_hash:
        return None
    try:
        return model.model_validate(raw)
    except ValidationError:
        return None


def latest_record(task_dir: Path | str, kind: Kind, content_hash: str, model: type[R]) -> R | None:
    """Any record of this kind for this content (most recently saved first), whatever its settings."""
    records = _read(Path(task_dir), kind).records
    for raw in reversed(list(records.values())):
        if raw.get("content_hash") == content_hash:
            try:
                return model.model_validate(raw)
            except ValidationError:
                continue
    return None


StoreHook = Callable[[Kind, Path, BaseModel], None]
_store_hooks: list[StoreHook] = []


def cached_report(
    task_dir: Path | str, kind: Kind, key: str | None, model: type[R], content_hash: str | None = None
) -> R | None:
    """The recorded report of ``kind`` for this exact task content (and settings key, if given), marked cached."""
    task_dir = Path(task_dir).resolve()
    content_hash = content_hash or task_content_hash(task_dir)
    if key is None:
        report = latest_record(task_dir, kind, content_hash, model)
    else:
        report = load_record(task_dir, kind, key, content_hash, model)
    if report is not None:
        report.cached = True  # type: ignore[attr-defined]
    return report


def register_store_hook(hook: StoreHook) -> None:
    """Have ``hook(kind, task_dir, record)`` called for every record saved (the task store plugs in here)."""
    if hook not in _store_hooks:
        _store_hooks.append(hook)


def unregister_store_hook(hook: StoreHook) -> None:
    if hook in _store_hooks:
        _store_hooks.remove(hook)


def save_record(task_dir: Path | str, kind: Kind, key: str, record: BaseModel) -> Path | None:
    """Write ``record`` under ``key`` next to the task and hand it to the store hooks.

    A read-only task folder (an installed dataset) is not an error: the
    verdict is still returned to the caller and still reaches the store.
    """
    task_dir = Path(task_dir)
    data = _read(task_dir, kind)
    data.records.pop(key, None)  # re-insert so the latest record is last
    data.records[key] = record.model_dump(mode="json")
    path = record_path(task_dir, kind)
    written: Path | None = path
    try:
        path.parent.mkdir(exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(data.model_dump_json(indent=2))
        tmp.replace(path)
    except OSError as exc:
        log.warning("%s: cannot record the %s verdict (%s)", path, kind, exc)
        written = None
    for hook in list(_store_hooks):
        try:
            hook(kind, task_dir, record)
        except (OSError, SQLAlchemyError):  # the local record is already safe; a store outage must not lose the verdict
            log.exception("store hook %r failed for %s", hook, task_dir)
    return written
