"""The local backend with a teardown that never returns, loaded by import path like any third-party environment.

What a ``docker compose down`` on a wedged daemon does to a trial: ``stop`` waits on a real subprocess that does
not end (``sleep``). When that wait is cancelled, the subprocess is killed and the sandbox stopped after all, so
the test leaves nothing behind."""

from __future__ import annotations

import asyncio

from autoenv.sandbox.local import LocalEnvironment

IMPORT_PATH = "tests.trials.hanging_env:StopHangs"


class StopHangs(LocalEnvironment):
    async def stop(self, delete: bool):
        waiting = await asyncio.create_subprocess_exec("sleep", "3600")
        try:
            await waiting.wait()
        finally:
            waiting.kill()
            await waiting.wait()
            await super().stop(delete)
