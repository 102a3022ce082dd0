"""Keep the local image cache bounded.

Every distinct environment (and the proposer makes many) builds its own
image, typically tens of MB over its base with its pip installs, so an
unbounded cache fills a disk within days. Sizes count what an image adds
over its base (shared base layers are never evicted with it). Images are evicted least recently used first once
the cache passes ``AUTOENV_CACHE_MAX_GB`` (default 10); an image used in the
last hour, or being built, is never evicted, so running sandboxes keep their
lower layer.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


def cache_root() -> Path:
    """Where the local backend keeps images, sandboxes' state and its exec helper (``AUTOENV_CACHE``)."""
    root = os.environ.get("AUTOENV_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "autoenv")
    return Path(root)


RECENT_SEC = 3600.0
LAST_USED = "last_used"


@dataclass
class CachedImage:
    path: Path
    size: int
    last_used: float


def max_bytes() -> int:
    return int(float(os.environ.get("AUTOENV_CACHE_MAX_GB", "10")) * 1024**3)


def tree_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def touch(image_dir: Path) -> None:
    """Mark an image as used now (its eviction clock)."""
    (image_dir / LAST_USED).touch()


def record_size(image_dir: Path, size: int | None = None) -> int:
    """Store the image's size (as the image store reports it; its own files where none is given)."""
    size = tree_size(image_dir) if size is None else size
    (image_dir / "size").write_text(str(size))
    return size


def images(images_dir: Path) -> list[CachedImage]:
    found = []
    for entry in images_dir.iterdir() if images_dir.is_dir() else []:
        if not (entry / "image.json").is_file():
            continue
        size_file = entry / "size"
        try:
            size = int(size_file.read_text())
        except (OSError, ValueError):
            size = record_size(entry)
        marker = entry / LAST_USED
        last_used = marker.stat().st_mtime if marker.exists() else (entry / "image.json").stat().st_mtime
        found.append(CachedImage(entry, size, last_used))
    return found


def prune(
    images_dir: Path,
    limit: int | None = None,
    *,
    recent_sec: float = RECENT_SEC,
    remove: Callable[[Path], None] | None = None,
) -> list[Path]:
    """Evict least recently used images until the cache fits ``limit`` bytes; return what was removed."""
    limit = max_bytes() if limit is None else limit
    cached = sorted(images(images_dir), key=lambda image: image.last_used)
    total = sum(image.size for image in cached)
    removed: list[Path] = []
    now = time.time()
    for image in cached:
        if total <= limit:
            break
        if now - image.last_used < recent_sec:
            continue
        lock_path = images_dir / f"{image.path.name}.lock"
        with open(lock_path, "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # being built or reused right now
            (remove or _remove_default)(image.path)
            fcntl.flock(lock, fcntl.LOCK_UN)
        # the lock file stays: removing it would let two builders lock different inodes
        total -= image.size
        removed.append(image.path)
    if removed and remove is not None:
        remove(None)  # let the image store drop layers no image uses any more
    return removed


def _remove_default(path: Path | None) -> None:
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)


def parse_size(text: str | int | None) -> int:
    """Bytes from an image store's size: an integer, or text such as ``180 MB`` (decimal units)."""
    if isinstance(text, int):
        return text
    parts = str(text or "0").split()
    units = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
    try:
        return int(float(parts[0]) * units.get(parts[1].lower() if len(parts) > 1 else "b", 1))
    except (ValueError, IndexError):
        return 0
