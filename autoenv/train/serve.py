"""Serve a policy checkpoint with a local vLLM (GPU machines) so rollouts sample from the newest version.

After a training step writes ``<out>/v{N+1}``, the next step's rollouts must
come from those weights. vLLM loads a ``save_pretrained`` folder directly and
speaks the OpenAI API the terminal agent's ``openai`` policy already uses,
returning token ids and log-probs (``return_token_ids``, ``logprobs``) so
trajectories train without re-tokenisation. Swapping versions restarts the
server: seconds to a minute, against minutes of rollouts and training per step,
and it works on every vLLM version (in-place weight updates do not).

vLLM is not installed by ``scripts/setup-train.sh`` (it pins its own torch and
needs a GPU); install it in its own venv (``.venv-vllm``) on the GPU machine
and point ``vllm`` at that venv's executable. On CPU machines ``kind="cpu"``
serves the same API from the training env with :mod:`autoenv.train.cpu_serve`
(Hugging Face ``generate``; right for the tiny offline policy, slow for real models).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from autoenv.train.policy import policy_version

__all__ = ["vllm_command", "cpu_command", "PolicyServer", "SERVE_KINDS"]

#: How a checkpoint is served: vLLM on a GPU machine, or the training env's CPU server.
SERVE_KINDS = ("vllm", "cpu")


def vllm_command(
    checkpoint: Path | str,
    *,
    port: int = 8000,
    served_model_name: str = "policy",
    vllm: str = "vllm",
    extra_args: list[str] | None = None,
) -> list[str]:
    """``vllm serve`` for one checkpoint; the model name stays fixed across versions so agents need no reconfiguring."""
    return [
        vllm,
        "serve",
        str(checkpoint),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--served-model-name",
        served_model_name,
        *(extra_args or []),
    ]


def cpu_command(
    checkpoint: Path | str, *, port: int = 8011, served_model_name: str = "policy", extra_args: list[str] | None = None
) -> list[str]:
    """The CPU server (:mod:`autoenv.train.cpu_serve`) in the training env."""
    from autoenv.train.trainenv import train_python

    return [
        str(train_python()),
        "-m",
        "autoenv.train.cpu_serve",
        "--checkpoint",
        str(checkpoint),
        "--port",
        str(port),
        "--served-model-name",
        served_model_name,
        *(extra_args or []),
    ]


class PolicyServer:
    """One server process for the current policy version; ``swap`` moves it to a new checkpoint."""

    def __init__(
        self,
        *,
        kind: str = "vllm",
        port: int = 8000,
        served_model_name: str = "policy",
        vllm: str = "vllm",
        extra_args: list[str] | None = None,
        log_dir: Path | None = None,
        ready_timeout: float = 900,
    ):
        if kind not in SERVE_KINDS:
            raise ValueError(f"unknown serving kind {kind!r}; choose one of: {', '.join(SERVE_KINDS)}")
        self.kind = kind
        self.port, self.served_model_name, self.vllm = port, served_model_name, vllm
        self.extra_args = extra_args or []
        self.log_dir = log_dir
        self.ready_timeout = ready_timeout
        self.process: subprocess.Popen | None = None
        self.checkpoint: Path | None = None
        self.version: int | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, checkpoint: Path | str) -> PolicyServer:
        self.stop()
        self.checkpoint = Path(checkpoint)
        self.version = policy_version(self.checkpoint)
        log = subprocess.DEVNULL
        if self.log_dir:
            Path(self.log_dir).mkdir(parents=True, exist_ok=True)
            log = open(Path(self.log_dir) / f"{self.kind}-v{self.version}.log", "ab")
        if self.kind == "cpu":
            from autoenv.train.trainenv import train_env

            command = cpu_command(
                self.checkpoint, port=self.port, served_model_name=self.served_model_name, extra_args=self.extra_args
            )
            env = train_env()
        else:
            command = vllm_command(
                self.checkpoint,
                port=self.port,
                served_model_name=self.served_model_name,
                vllm=self.vllm,
                extra_args=self.extra_args,
            )
            env = None
        try:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env
            )
        finally:
            if log is not subprocess.DEVNULL:
                log.close()  # the child holds its own copy
        self.wait_ready()
        return self

    def wait_ready(self) -> None:
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                where = f"; see {Path(self.log_dir) / f'{self.kind}-v{self.version}.log'}" if self.log_dir else ""
                raise RuntimeError(
                    f"the {self.kind} policy server exited with code {self.process.returncode} while loading "
                    f"{self.checkpoint}{where}"
                )
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=5) as response:
                    if any(m.get("id") == self.served_model_name for m in json.load(response).get("data", [])):
                        return
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.5 if self.kind == "cpu" else 2)
        raise TimeoutError(
            f"the {self.kind} policy server did not serve {self.checkpoint} within {self.ready_timeout:.0f}s"
        )

    def swap(self, checkpoint: Path | str) -> PolicyServer:
        """Serve another version; a no-op when it is already the one served."""
        if self.process is not None and self.process.poll() is None and self.checkpoint == Path(checkpoint):
            return self
        return self.start(checkpoint)

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.process = None

    def __enter__(self) -> PolicyServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
