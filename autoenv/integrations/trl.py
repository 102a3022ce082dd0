"""autoenv's sandbox and grading as an environment for TRL's ``GRPOTrainer`` (``environment_factory=``).

TRL 1.16 ships ``trl.experimental.harbor``: a ``HarborSpec`` that turns a folder of Harbor tasks into the
trainer's dataset, environment factory and reward, around a ``HarborEnv`` class that runs Harbor in the
trainer's process on a Harbor environment *type* and grades in the agent's own sandbox (shared mode). We keep
TRL's spec and replace the environment: :class:`AutoenvBashEnv` is a ``HarborEnv`` subclass, so

    spec = HarborSpec("examples/tasks", agent=AutoenvBashEnv, environment_type="local")
    GRPOTrainer(..., train_dataset=spec.train_dataset, environment_factory=spec.environment_factory,
                reward_funcs=spec.reward_funcs)

trains on autoenv's daemonless sandbox (or ``environment_type="docker"``), and every reward is the verdict of a
real autoenv trial: outputs collected, the task's tests in a fresh sandbox, the agent's code never in the
grading process (issue 25). The trial runs in a bridge process (:mod:`autoenv.integrations.bridge`) with the
main interpreter, because Harbor needs Python 3.12 and the training env is 3.11; one bridge serves every
environment of the trainer. This module imports no Harbor, only TRL.
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import shutil
import subprocess
import sys
import threading
import warnings
from concurrent.futures import Future
from pathlib import Path
from typing import Any

try:
    from trl.experimental.harbor import HarborEnv
except ImportError as exc:  # pragma: no cover - depends on the interpreter
    raise ImportError(
        "autoenv.integrations.trl needs TRL >= 1.16 (trl.experimental.harbor): run it in the training env "
        "(bash scripts/setup-train.sh, then .venv-train/bin/python)"
    ) from exc

from autoenv.train.trainenv import REPO_ROOT, train_env

__all__ = ["AutoenvEnv", "AutoenvBashEnv", "BridgeError", "BridgeClient", "bridge", "main_python"]

PYTHON_VAR = "AUTOENV_PYTHON"


class BridgeError(RuntimeError):
    """The bridge answered with an error; ``kind`` is autoenv's fault kind (task, sandbox, backend, bug...)."""

    def __init__(self, kind: str, message: str):
        super().__init__(f"[{kind}] {message}")
        self.kind = kind


def main_python() -> Path:
    """The interpreter with Harbor and autoenv: ``$AUTOENV_PYTHON``, else this checkout's ``.venv``."""
    override = os.environ.get(PYTHON_VAR)
    candidates = [Path(override)] if override else [REPO_ROOT / ".venv" / "bin" / "python"]
    if not override and (autoenv_cli := shutil.which("autoenv")):
        first = Path(autoenv_cli).read_text(errors="replace").splitlines()[:1]
        if first and first[0].startswith("#!"):
            candidates.append(Path(first[0][2:].strip()))
    for candidate in candidates:
        if candidate.exists():
            return candidate
    raise FileNotFoundError(
        f"no Python with Harbor and autoenv for the bridge (tried {', '.join(map(str, candidates))}): run "
        f"`bash {REPO_ROOT / 'scripts' / 'setup.sh'}` or set {PYTHON_VAR} to that interpreter"
    )


class BridgeClient:
    """A bridge process and the calls in flight to it; safe to use from several threads."""

    def __init__(self, python: Path | str | None = None):
        env = train_env()
        env.pop("PYTHONHOME", None)
        self._process = subprocess.Popen(
            [str(python or main_python()), "-m", "autoenv.integrations.bridge"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            env=env,
            cwd=str(REPO_ROOT),
        )
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: dict[int, Future] = {}
        self._ready: Future = Future()
        self._reader = threading.Thread(target=self._read, name="autoenv-bridge-reader", daemon=True)
        self._reader.start()
        self._ready.result(timeout=120)

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("id") is None:
                if not self._ready.done():
                    self._ready.set_result(message.get("result"))
                continue
            with self._lock:
                future = self._pending.pop(message["id"], None)
            if future is None:
                continue
            if "error" in message:
                future.set_exception(BridgeError(message["error"]["kind"], message["error"]["message"]))
            else:
                future.set_result(message["result"])
        gone = BridgeError("sandbox", f"the bridge process exited (status {self._process.wait()}); see its stderr")
        if not self._ready.done():
            self._ready.set_exception(gone)
        with self._lock:
            pending, self._pending = self._pending, {}
        for future in pending.values():
            future.set_exception(gone)

    def call(self, op: str, timeout: float | None = None, **fields: Any) -> dict[str, Any]:
        """Send one request and wait for its answer (raises :class:`BridgeError` on an error answer)."""
        future: Future = Future()
        with self._lock:
            if self._process.poll() is not None:
                raise BridgeError("sandbox", f"the bridge process has exited (status {self._process.returncode})")
            request_id = next(self._ids)
            self._pending[request_id] = future
            assert self._process.stdin is not None
            self._process.stdin.write(json.dumps({"id": request_id, "op": op, **fields}) + "\n")
            self._process.stdin.flush()
        return future.result(timeout=timeout)

    def close(self) -> None:
        """End the bridge: it cancels the trials still open (removing their sandboxes) and exits."""
        if self._process.poll() is None:
            try:
                assert self._process.stdin is not None
                self._process.stdin.close()
                self._process.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()


_BRIDGES: dict[str, BridgeClient] = {}
_BRIDGES_LOCK = threading.Lock()


def bridge(python: Path | str | None = None) -> BridgeClient:
    """The bridge of this process for ``python`` (started on first use, ended at exit)."""
    key = str(python or main_python())
    with _BRIDGES_LOCK:
        client = _BRIDGES.get(key)
        if client is None or client._process.poll() is not None:
            client = _BRIDGES[key] = BridgeClient(key)
    return client


@atexit.register
def _close_bridges() -> None:
    for client in list(_BRIDGES.values()):
        client.close()


_UNGRADED = object()


class AutoenvEnv(HarborEnv):
    """A Harbor task in an autoenv trial; subclasses add the tools (see :class:`AutoenvBashEnv`).

    Args:
        environment_type: autoenv's backend for the trial (``local``: its daemonless sandbox; ``docker``:
            Harbor's Docker environment). ``HarborSpec(environment_type=...)`` passes it through.
        trials_dir: where the trials' folders go (default ``runs/trials`` of the bridge's working folder).
        agent_timeout_sec: the agent phase's limit, instead of the task's ``[agent] timeout_sec`` (generation by
            a slow model counts against it).
        python: the interpreter that runs the bridge (default :func:`main_python`).
    """

    PROMPT_SUFFIX = (
        "\n\nWork in the sandbox with your tools. When you stop calling tools, your work is graded by the "
        "task's tests in a fresh copy of the environment: only the files you left count."
    )

    def __init__(
        self,
        environment_type: str = "local",
        *,
        trials_dir: str | None = None,
        agent_timeout_sec: float | None = None,
        python: str | None = None,
    ):
        # HarborEnv.__init__ starts an event loop for Harbor in this process; Harbor runs in the bridge instead
        self._environment_type = environment_type
        self._trials_dir = str(Path(trials_dir).resolve()) if trials_dir else None
        self._agent_timeout_sec = agent_timeout_sec
        self._python = python
        self._session: str | None = None
        self._reward: Any = _UNGRADED
        self.verdict: dict[str, Any] | None = None  # the last trial's answer to submit (trial_dir, error, ...)

    def reset(self, task_dir: str | None = None, **kwargs: Any) -> str:
        if task_dir is None:
            raise ValueError("AutoenvEnv.reset needs `task_dir` (a column of HarborSpec's dataset)")
        self._close()
        answer = bridge(self._python).call(
            "start",
            task_dir=str(Path(task_dir).resolve()),
            env=self._environment_type,
            trials_dir=self._trials_dir,
            agent_timeout_sec=self._agent_timeout_sec,
        )
        self._session = answer["session"]
        self._reward = _UNGRADED
        self.verdict = None
        return answer["instruction"] + self.PROMPT_SUFFIX

    def _exec(self, command: str, timeout: int = 180) -> str:
        if self._session is None:
            return "(no task: reset was not called)"
        try:
            return bridge(self._python).call("exec", session=self._session, command=command, timeout_sec=timeout)[
                "output"
            ]
        except BridgeError as exc:
            if exc.kind == "task":  # e.g. the agent phase's time ran out: the policy sees it, the verdict follows
                return f"(error: {exc})"
            raise

    @property
    def reward(self) -> float:
        """The trial's reward, graded once on first read.

        A missing verdict is never handed to the trainer as a number (GRPOTrainer sums reward functions with
        ``nansum``: a NaN would train as 0, penalising the policy for the machine's fault). The agent's own failure
        (it passed a bound of its trial, broke its sandbox) is 0; a fault of the machine or the task raises
        :class:`BridgeError`, which ends the training step: resume from the last checkpoint once it is repaired."""
        if self._session is None and self._reward is _UNGRADED:
            return 0.0
        if self._reward is _UNGRADED:
            session, self._session = self._session, None
            self.verdict = bridge(self._python).call("submit", session=session)
            value = self.verdict.get("reward")
            if value is None:
                who = self.verdict.get("party")
                why = (
                    f"no verdict for {self.verdict.get('trial_dir')}: {self.verdict.get('error')} "
                    f"{(self.verdict.get('error_message') or '')[:300]}"
                )
                if who != "agent":
                    raise BridgeError("sandbox" if who == "machine" else (who or "bug"), f"{who}'s fault, {why}")
                warnings.warn(f"autoenv: the agent's failure, reward 0: {why}", stacklevel=2)
            self._reward = 0.0 if value is None else float(value)
        return self._reward

    def _close(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            try:
                bridge(self._python).call("close", session=session, timeout=120)
            except (BridgeError, TimeoutError):
                pass

    def __del__(self) -> None:
        if sys.is_finalizing():
            return
        try:
            self._close()
        except Exception:  # noqa: BLE001 - best effort; the bridge removes what is left when it exits
            pass


class AutoenvBashEnv(AutoenvEnv):
    """One ``bash`` tool: a shell command in the task's sandbox (as the task's agent user)."""

    def bash(self, command: str) -> str:
        """
        Run a shell command in the task's sandbox and return its combined stdout and stderr (and its exit status
        when it is not 0). Each call starts a new shell; files persist between calls.

        Args:
            command: The shell command to run.

        Returns:
            The command's output.
        """
        return self._exec(command)
