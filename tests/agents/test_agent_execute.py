"""Actions carried out in a real local sandbox through ``environment.exec`` only."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from agent_helpers import HELLO_DOCKERFILE, needs_sandbox
from harbor.models.task.config import EnvironmentConfig
from harbor.models.trial.paths import TrialPaths

from autoenv.agents.execute import execute, trim_output
from autoenv.sandbox.local import LocalEnvironment
from autoenv.shared.actions import FinishAction, ReadFileAction, RunAction, WriteFileAction


def in_sandbox(task: Path, tmp_path: Path, body):
    async def go():
        paths = TrialPaths(trial_dir=tmp_path / "trial")
        paths.mkdir()
        env = LocalEnvironment(
            environment_dir=task / "environment",
            environment_name="agent-exec",
            session_id="agent-exec",
            trial_paths=paths,
            task_env_config=EnvironmentConfig(),
        )
        await env.start(force_build=False)
        try:
            return await body(env)
        finally:
            await env.stop(delete=True)

    return asyncio.run(go())


async def do(env, action, **kw):
    return await execute(
        env, action, "c1", timeout_sec=kw.get("timeout_sec", 30), max_output_chars=kw.get("max_output_chars", 10_000)
    )


def test_trim_keeps_head_and_tail():
    text = "".join(f"line {i}\n" for i in range(1000))
    cut, truncated = trim_output(text, 200)
    assert truncated and cut.startswith("line 0\n") and cut.endswith("line 999\n")
    assert "characters omitted" in cut and len(cut) < 260
    assert trim_output("short", 200) == ("short", False)


@needs_sandbox
def test_run_read_write_in_the_sandbox(make_task, tmp_path):
    task = make_task("exec", dockerfile=HELLO_DOCKERFILE)
    tricky = "quotes ' \" and $HOME `uname` \\n ünïcode\nno trailing newline"
    big = "".join(f"{i:08d} {'x' * 90}\n" for i in range(2500))  # ~250 KB: several exec chunks

    async def body(env):
        out = {}
        out["run"] = await do(env, RunAction(command="echo out; echo err >&2; exit 3"))
        out["cwd"] = await do(env, RunAction(command="pwd && cat built.txt"))
        out["long"] = await do(env, RunAction(command="seq 1 100000"), max_output_chars=300)
        out["timeout"] = await do(env, RunAction(command="sleep 30", timeout_sec=1))
        out["write"] = await do(env, WriteFileAction(path="/app/deep/dir/t.txt", content=tricky))
        out["read"] = await do(env, ReadFileAction(path="deep/dir/t.txt"))  # relative to the workdir
        out["big"] = await do(env, WriteFileAction(path="/app/big.txt", content=big))
        out["sum"] = await do(env, RunAction(command="sha256sum /app/big.txt"))
        out["missing"] = await do(env, ReadFileAction(path="/app/nope.txt"))
        out["finish"] = await do(env, FinishAction(message="bye"))
        return out

    out = in_sandbox(task, tmp_path, body)
    assert out["run"].output == "out\nerr\n[exit code 3]" and out["run"].exit_code == 3
    assert out["cwd"].output.startswith("/app\nbuilt\n")
    assert (
        out["long"].truncated
        and out["long"].output.startswith("1\n2\n")
        and "100000\n[exit code 0]" in out["long"].output
    )
    assert out["timeout"].error == "timeout" and out["timeout"].duration_sec < 10
    assert (
        out["write"].exit_code == 0
        and out["write"].output == f"Wrote {len(tricky.encode())} bytes to /app/deep/dir/t.txt."
    )
    assert out["read"].output == tricky
    assert out["sum"].output.split()[0] == hashlib.sha256(big.encode()).hexdigest()
    assert out["missing"].error == "read_failed" and "No such file" in out["missing"].output
    assert out["finish"].output == "Finished." and out["finish"].exit_code is None
