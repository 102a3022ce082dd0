"""Run in the training env (Python 3.11, TRL, no Harbor): play scripted episodes through AutoenvBashEnv.

Reads a JSON list of episodes on stdin, ``{"task_dir", "commands": [...]}``, and prints one JSON line per
episode: the reward (``env.reward``, as TRL's Harbor reward reads it), the verdict, the tool outputs, or the
error ``reset`` raised (its kind and message).
"""

from __future__ import annotations

import json
import os
import sys

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
        reward = env.reward
        print(json.dumps({"reward": reward, "verdict": env.verdict, "outputs": outputs}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
