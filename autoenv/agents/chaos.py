"""A Harbor agent that does, by accident, what an exploring policy does: the soak test of a trial's bounds.

RL runs thousands of trials unattended, and a policy that explores leaves huge or sparse files, many files, deep
trees, FIFOs and sockets where outputs should be, names no terminal prints, fork and memory bombs, sleeps past its
time, kills its own shell, fills ``/tmp``, closes its stdout and leaves processes behind. Each trial draws one
behaviour (``behaviour=NAME`` pins it; ``seed`` draws it), runs it as root in the agent's sandbox, then stops. The
trial must still end with a verdict (or a machine-fault stop), in bounded time, leaving nothing on the host:
``bench/chaos.py`` runs many and prints what happened.

Load it by import path: ``autoenv trial TASK --agent autoenv.agents.chaos:ChaosAgent``.
"""

from __future__ import annotations

import random

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

IMPORT_PATH = "autoenv.agents.chaos:ChaosAgent"

#: behaviour -> a POSIX shell script; ``$W`` is the task's working folder (where outputs go)
BEHAVIOURS: dict[str, str] = {
    "sparse-20g": "truncate -s 20G $W/big.bin",
    "real-file-over-disk": "fallocate -l 10G $W/big.bin || fallocate -l 3G $W/big.bin",
    "many-files": "mkdir -p $W/many && cd $W/many && seq 1 150000 | xargs touch",
    "deep-tree": 'd=$W; i=0; while [ $i -lt 120 ]; do d=$d/deeper; i=$((i+1)); done; mkdir -p "$d" && touch "$d/leaf"',
    "fifo-outputs": "for f in out.txt output.txt result.txt answer.txt report.txt; do rm -f $W/$f; mkfifo $W/$f; done",
    "socket": "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.bind('$W/agent.sock')\" "
    "|| mkfifo $W/agent.sock",
    "unreadable": "mkdir -p $W/locked/inner && echo x > $W/locked/inner/f && chmod 000 $W/locked $W/locked/inner",
    "odd-names": 'touch "$W/$(printf \'new\\nline\')" "$W/$(printf \'bad\\377\\376utf8\')" "$W/ -dash" '
    "&& ln -s loop1 $W/loop2 && ln -s loop2 $W/loop1 && ln -s /etc/shadow $W/shadow-link",
    "fork-bomb": "timeout 5 sh -c 'b() { b | b & }; b' 2>/dev/null; true",
    "memory-bomb": "timeout 10 python3 -c 'a=[]\nwhile True: a.append(bytearray(1<<26))' 2>/dev/null "
    "|| timeout 10 sh -c 'head -c 8G /dev/zero | tail -c 1 >/dev/null'",
    "sleep-past-timeout": "sleep 100000",
    "kill-own-shell": "kill -9 $$",
    "fill-tmp": "fallocate -l 100G /tmp/fill || dd if=/dev/zero of=/tmp/fill bs=1M count=2048 2>/dev/null; df -h /tmp",
    "close-stdout": "exec 1>&- 2>&-; echo lost; sleep 1",
    "background-processes": "(nohup sleep 100000 >/dev/null 2>&1 &); (setsid sleep 100000 &); echo left",
    "print-forever": "timeout 15 cat /dev/zero",
}


class ChaosAgent(BaseAgent):
    def __init__(self, *args, behaviour: str = "", seed: int | str = 0, workdir: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.behaviour = behaviour or random.Random(str(seed)).choice(sorted(BEHAVIOURS))
        if self.behaviour not in BEHAVIOURS:
            raise ValueError(f"unknown behaviour {self.behaviour!r}; choose one of {', '.join(sorted(BEHAVIOURS))}")
        self.workdir = workdir

    @staticmethod
    def name() -> str:
        return "chaos"

    def version(self) -> str:
        return "1"

    async def setup(self, environment: BaseEnvironment) -> None:
        pass

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        # the folder commands start in (the task's working folder) unless one is given
        start = f"W={self.workdir}" if self.workdir else 'W="$(pwd)"'
        script = f'{start}; mkdir -p "$W"; ' + BEHAVIOURS[self.behaviour]
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        (self.logs_dir / "chaos.txt").write_text(f"behaviour={self.behaviour}\n")
        result = await environment.exec(script, user="root")
        with open(self.logs_dir / "chaos.txt", "a") as log:
            log.write(f"exit={result.return_code}\n{(result.stdout or '')[-2000:]}\n{(result.stderr or '')[-2000:]}\n")


__all__ = ["BEHAVIOURS", "IMPORT_PATH", "ChaosAgent"]
