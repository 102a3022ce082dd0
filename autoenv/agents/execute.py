"""Carry out actions in a Harbor environment using only ``exec``.

Only ``BaseEnvironment.exec`` is used (no tmux, no uploads) so the agent runs
unchanged on autoenv's local sandbox and on every Harbor backend, and file
writes get the same owner and permissions as the agent's own commands.
"""

from __future__ import annotations

import base64
import math
import shlex
import time
from typing import Any

from harbor.environments.base import BaseEnvironment

from autoenv.shared.actions import ActionResult, FinishAction, ReadFileAction, RunAction, WriteFileAction

#: base64 text per exec; one argv string must stay under Linux's 128 KiB MAX_ARG_STRLEN.
_WRITE_CHUNK = 64_000
#: Bytes fetched for read_file before trimming, so a huge file cannot flood memory.
_READ_CAP = 2_000_000


def run_script(command: str) -> str:
    """The shell text a ``run`` action executes: the command, its errors interleaved with its output."""
    return f"exec 2>&1\n{command}"


def write_scripts(path: str, content: str | bytes) -> list[str]:
    """The shell texts a ``write_file`` action executes, one exec each: its bytes base64-coded in pieces under the
    argument limit, the first creating the folder and the file, the others appending."""
    q = shlex.quote(path)
    raw = content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass")
    data = base64.b64encode(raw).decode()
    chunks = [data[i : i + _WRITE_CHUNK] for i in range(0, len(data), _WRITE_CHUNK)] or [""]
    return [
        run_script(
            (f'mkdir -p -- "$(dirname -- {q})" && ' if n == 0 else "")
            + f"printf %s {shlex.quote(chunk)} | base64 -d {'>' if n == 0 else '>>'} {q}"
        )
        for n, chunk in enumerate(chunks)
    ]


def trim_output(text: str, limit: int) -> tuple[str, bool]:
    """Keep the start and the end of a long output, which is where errors and summaries are."""
    if limit <= 0 or len(text) <= limit:
        return text, False
    head = limit // 2
    tail = limit - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted} characters omitted ...]\n{text[-tail:]}", True


async def execute(
    environment: BaseEnvironment, action: Any, call_id: str, *, timeout_sec: float, max_output_chars: int
) -> ActionResult:
    """Run one action; failures (timeouts, missing files) become results, never exceptions."""
    if not isinstance(action, (RunAction, ReadFileAction, WriteFileAction, FinishAction)):
        raise TypeError(f"not an action: {action!r}")
    started = time.monotonic()
    try:
        if isinstance(action, RunAction):
            limit = min(timeout_sec, action.timeout_sec) if action.timeout_sec else timeout_sec
            res = await environment.exec(run_script(action.command), timeout_sec=_secs(limit))
            body, cut = trim_output(res.stdout or "", max_output_chars)
            code = res.return_code
            output = f"{body.rstrip()}\n[exit code {code}]" if body.strip() else f"[no output, exit code {code}]"
            return _result(call_id, action, output, code, None, started, cut)
        if isinstance(action, ReadFileAction):
            q = shlex.quote(action.path)
            res = await environment.exec(f"exec 2>&1\nhead -c {_READ_CAP} -- {q}", timeout_sec=_secs(timeout_sec))
            body, cut = trim_output(res.stdout or "", max_output_chars)
            if res.return_code != 0:
                return _result(
                    call_id,
                    action,
                    f"ERROR: cannot read {action.path}: {body.strip()}",
                    res.return_code,
                    "read_failed",
                    started,
                    cut,
                )
            return _result(call_id, action, body if body else f"[{action.path} is empty]", 0, None, started, cut)
        if isinstance(action, WriteFileAction):
            return await _write(environment, action, call_id, timeout_sec, started)
        return _result(call_id, action, "Finished.", None, None, started, False)
    except TimeoutError as exc:
        return _result(
            call_id, action, f"ERROR: timed out after {timeout_sec:g} s ({exc})", None, "timeout", started, False
        )
    except Exception as exc:  # noqa: BLE001 - backend errors (e.g. the local sandbox's CommandTimeout) are observations
        kind = "timeout" if "timed out" in str(exc).lower() else "exec_error"
        return _result(call_id, action, f"ERROR: {type(exc).__name__}: {exc}", None, kind, started, False)


async def _write(
    environment: BaseEnvironment, action: WriteFileAction, call_id: str, timeout_sec: float, started: float
) -> ActionResult:
    for script in write_scripts(action.path, action.data()):
        res = await environment.exec(script, timeout_sec=_secs(timeout_sec))
        if res.return_code != 0:
            out = (res.stdout or "").strip()
            return _result(
                call_id,
                action,
                f"ERROR: cannot write {action.path}: {out}",
                res.return_code,
                "write_failed",
                started,
                False,
            )
    size = len(action.data())
    return _result(call_id, action, f"Wrote {size} bytes to {action.path}.", 0, None, started, False)


def _secs(value: float) -> int:
    return max(1, int(math.ceil(value)))


def _result(
    call_id: str, action: Any, output: str, code: int | None, error: str | None, started: float, cut: bool
) -> ActionResult:
    return ActionResult(
        call_id=call_id,
        action=action,
        output=output,
        exit_code=code,
        error=error,
        duration_sec=round(time.monotonic() - started, 3),
        truncated=cut,
    )
