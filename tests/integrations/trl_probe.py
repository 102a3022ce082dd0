"""Run in the training env (Python 3.11, TRL, no Harbor): play scripted episodes through AutoenvBashEnv.

Reads a JSON list of episodes on stdin, ``{"task_dir", "commands": [...]}``, and prints one JSON line per
episode: the reward (``env.reward``, as TRL's Harbor reward reads it), the verdict, the tool outputs, or the
error ``reset`` or the reward raised (its kind and message). An episode's ``break_machine`` is a host file made
after its commands and before its reward is read (a test's broken runc starts failing when it exists).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

from autoenv.integrations.trl import AutoenvBashEnv, BridgeError  # noqa: E402


def main() -> int:
    env = AutoenvBashEnv("local", trials_dir=sys.argv[1] if len(sys.argv) > 1 else None)
    for episode in json.load(sys.stdin):
        try:
            env.reset(task_dir=episode["task_dir"], task_index=0)
        except BridgeError as exc:
            print(json.dumps({"error": exc.kind, "message": str(exc)}), flush=True)
            continue
        outputs = [env.bash(command) for command in episode["commands"]]
        if episode.get("break_machine"):
            Path(episode["break_machine"]).touch()
        try:
            reward = env.reward
        except BridgeError as exc:
            print(json.dumps({"reward_error": exc.kind, "message": str(exc), "outputs": outputs}), flush=True)
            continue
        print(json.dumps({"reward": reward, "verdict": env.verdict, "outputs": outputs}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
