"""One sandbox started ahead per configuration, so that the next trial's start does not wait for the runtime.

``runc run`` costs ~115 ms, and a trial starts two sandboxes of one configuration in a row (the agent's, then a
fresh one for the verifier), as do the many trials of one task in a validation or a rollout group. When a sandbox
of some configuration starts, a spare of the same configuration is started in the background; the next start of
that configuration takes it. A spare has run nothing but its init (the exec helper): it is the sandbox a fresh
start would give. Spares left unused for :data:`IDLE_SECONDS` are stopped, and the reaper of each removes it if
autoenv ends first (:mod:`autoenv.sandbox.local.container`).

``AUTOENV_SPARES=0`` turns this off (every start waits for its own ``runc run``).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
import uuid
from collections.abc import Hashable
from dataclasses import astuple

from autoenv.errors import AutoenvError
from autoenv.sandbox.local.cache import cache_root
from autoenv.sandbox.local.container import Container, ContainerConfig

#: A spare nobody took within this many seconds is stopped.
IDLE_SECONDS = 30.0

_lock = threading.Lock()
_spares: dict[Hashable, tuple[Container, float]] = {}
_starting: set[Hashable] = set()


def enabled() -> bool:
    return os.environ.get("AUTOENV_SPARES", "1") != "0"


def _key(config: ContainerConfig) -> Hashable:
    fields = astuple(config)
    return tuple(tuple(sorted(f.items())) if isinstance(f, dict) else f for f in fields)


def take(config: ContainerConfig) -> Container | None:
    """A started sandbox of exactly this configuration, or None; either way a spare is made for the next start."""
    if not enabled():
        return None
    key = _key(config)
    with _lock:
        found = _spares.pop(key, None)
    _refill(key, config)
    if found is None:
        return None
    container, _ = found
    if not container.alive():
        threading.Thread(target=container.stop, daemon=True).start()
        return None
    return container


def discard(config: ContainerConfig) -> None:
    """Stop the spare of this configuration (its image was rebuilt)."""
    with _lock:
        found = _spares.pop(_key(config), None)
    if found is not None:
        found[0].stop(wait=False)


def _refill(key: Hashable, config: ContainerConfig) -> None:
    with _lock:
        if key in _spares or key in _starting:
            return
        _starting.add(key)
    threading.Thread(target=_start_spare, args=(key, config), name="sandbox-spare", daemon=True).start()


def _start_spare(key: Hashable, config: ContainerConfig) -> None:
    container_id = f"spare-{uuid.uuid4().hex[:12]}"
    try:
        container = Container(container_id, cache_root() / "sandboxes" / container_id, config)
        container.start()
    except (AutoenvError, OSError, subprocess.SubprocessError):
        # a spare is an optimisation: the start that needs the sandbox meets the same fault and reports it
        with _lock:
            _starting.discard(key)
        return
    with _lock:
        _starting.discard(key)
        _spares[key] = (container, time.monotonic())
    _expire_later()


_expiry_armed = False


def _expire_later() -> None:
    global _expiry_armed
    with _lock:
        if _expiry_armed:
            return
        _expiry_armed = True
    threading.Thread(target=_expire, name="sandbox-spares-expiry", daemon=True).start()


def _expire() -> None:
    global _expiry_armed
    while True:
        time.sleep(IDLE_SECONDS / 3)
        now = time.monotonic()
        with _lock:
            old = [k for k, (_, since) in _spares.items() if now - since > IDLE_SECONDS]
            stale = [_spares.pop(k)[0] for k in old]
            done = not _spares  # decided under the lock: a spare added later arms a new expiry thread
            if done:
                _expiry_armed = False
        for container in stale:
            container.stop(wait=False)
        if done:
            return


def stop_all() -> None:
    """Stop every spare now (tests, and the end of a long run)."""
    with _lock:
        spares = [c for c, _ in _spares.values()]
        _spares.clear()
    for container in spares:
        container.stop(wait=False)


__all__ = ["IDLE_SECONDS", "discard", "enabled", "stop_all", "take"]
