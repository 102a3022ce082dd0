"""The image cache stays under its size limit, evicting least recently used images."""

from __future__ import annotations

import os
import time

from autoenv.sandbox.local import cache


def make_image(root, name: str, size: int, age_sec: float):
    image = root / name
    (image / "layer").mkdir(parents=True)
    (image / "layer" / "blob").write_bytes(b"x" * size)
    (image / "image.json").write_text("{}")
    cache.record_size(image, size)
    cache.touch(image)
    past = time.time() - age_sec
    os.utime(image / cache.LAST_USED, (past, past))
    return image


def test_prune_evicts_oldest_first_and_spares_recent(tmp_path):
    old = make_image(tmp_path, "old", 4000, 3 * 3600)
    mid = make_image(tmp_path, "mid", 4000, 2 * 3600)
    recent = make_image(tmp_path, "recent", 4000, 60)
    removed = cache.prune(tmp_path, limit=9000)
    assert removed == [old]
    assert mid.exists() and recent.exists()
    # over the limit again, but the only other candidate is recent: kept
    removed = cache.prune(tmp_path, limit=100)
    assert removed == [mid] and recent.exists()


def test_sizes_are_recorded(tmp_path):
    image = make_image(tmp_path, "a", 1234, 0)
    assert cache.images(tmp_path)[0].size == 1234
    assert image.exists()
