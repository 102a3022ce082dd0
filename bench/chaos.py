"""Chaos soak: many trials in a row on the bundled tasks with an agent that misbehaves the way an exploring policy does
by accident (:mod:`autoenv.agents.chaos`), and what the harness made of it.

Every trial must end with a verdict or a machine-fault stop, none may hang, and nothing may be left over. Prints:
trials, verdicts by kind (reward, error kind), the slowest trial against its timeouts, the harness's peak memory,
the host's disk before and after, and sandboxes, mounts, cgroups and processes left over. Exits 1 when a trial hung,
ended without a verdict that is not a machine stop, or left something behind.

    .venv/bin/python bench/chaos.py --trials 500            # the recorded run (bench/README.md)
    .venv/bin/python bench/chaos.py --trials 16 --json      # CI (tests/sandbox/test_chaos_bench.py)
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from autoenv.agents.chaos import BEHAVIOURS, IMPORT_PATH  # noqa: E402
from autoenv.errors import MachineError  # noqa: E402
from autoenv.sandbox.local.cache import cache_root  # noqa: E402
from autoenv.sandbox.local.environment import IMAGE_RECORD  # noqa: E402
from autoenv.trials.attribution import ErrorKind, Party, party  # noqa: E402
from autoenv.trials.runner import arun_trial, quiet_harbor_logs  # noqa: E402
from bench._common import machine  # noqa: E402

#: the agent's time in a chaos trial (the behaviours that sleep past it are stopped by it)
AGENT_TIMEOUT_SEC = 20.0
#: a trial that takes longer than its timeouts (build, agent, verifier) plus this has hung
MARGIN_SEC = 90.0
#: tasks whose verifiers need a browser or LibreOffice: left out (they need more than a sandbox)
CGROUP_BASES = ("/sys/fs/cgroup/pids/autoenv", "/sys/fs/cgroup/autoenv")
HEAVY = {"incident-runbook-webapp", "docx-brief-formatting", "variance-formulas-xlsx", "cashflow-scenarios-memo"}


def bundled_tasks() -> list[Path]:
    return sorted(
        p for p in (REPO / "examples" / "tasks").iterdir() if (p / "task.toml").is_file() and p.name not in HEAVY
    )


def own_timeouts(task: Path) -> float:
    """The seconds a trial of ``task`` may take by its own timeouts other than the agent's: its sandbox's build
    and start, and its verifier (Harbor's defaults where task.toml says nothing)."""
    import tomllib

    config = tomllib.loads((task / "task.toml").read_text())
    build = float(config.get("environment", {}).get("build_timeout_sec", 600.0))
    return build + float(config.get("verifier", {}).get("timeout_sec", 600.0))


def disk_used() -> int:
    usage = shutil.disk_usage(cache_root())
    return usage.total - usage.free


def sandbox_ids(trials_dir: Path) -> set[str]:
    """The sandboxes the soak's trials ran in (each trial folder's image record names its agent's and verifier's)."""
    ids: set[str] = set()
    for record in trials_dir.glob(f"*/{IMAGE_RECORD}"):
        try:
            ids.update(json.loads(record.read_text()).get("sandboxes", []))
        except (OSError, ValueError):
            pass
    return ids


def leftovers(ids: set[str]) -> dict[str, list[str]]:
    """What is still there of these sandboxes: folders, mounts, cgroups, runtime containers, processes."""
    sandboxes = cache_root() / "sandboxes"
    mounts = Path("/proc/mounts").read_text().splitlines()
    listed = subprocess.run(["runc", "--root", "/run/autoenv/runc", "list", "-q"], capture_output=True, text=True)
    found: dict[str, list[str]] = {
        "folders": sorted(i for i in ids if (sandboxes / i).exists()),
        "mounts": sorted({i for i in ids for ln in mounts if str(sandboxes / i) in ln}),
        "cgroups": sorted(
            i
            for i in ids
            for base in ("/sys/fs/cgroup/pids/autoenv", "/sys/fs/cgroup/autoenv")
            if Path(base, i).is_dir()
        ),
        "containers": sorted(set(listed.stdout.split()) & ids),
        "processes": [],
    }
    for i in ids:
        for base in CGROUP_BASES:
            procs = Path(base, i, "cgroup.procs")
            if procs.is_file():
                found["processes"] += [f"{i}:{pid}" for pid in procs.read_text().split()]
    return found


def settle(ids: set[str], deadline_sec: float = 30.0) -> dict[str, list[str]]:
    """Leftovers once the background removal of the last sandboxes had its seconds."""
    end = time.monotonic() + deadline_sec
    while any(leftovers(ids).values()) and time.monotonic() < end:
        time.sleep(0.5)
    return leftovers(ids)


async def soak(n_trials: int, seed: int, at_once: int, trials_dir: Path) -> dict:
    tasks = bundled_tasks()
    names = sorted(BEHAVIOURS)
    jobs = [(tasks[i % len(tasks)], names[(i + seed) % len(names)]) for i in range(n_trials)]
    semaphore = asyncio.Semaphore(at_once)
    rows: list[dict] = []
    stopped: str | None = None

    async def one(task: Path, behaviour: str) -> None:
        nonlocal stopped
        async with semaphore:
            if stopped:
                return
            limit = AGENT_TIMEOUT_SEC + own_timeouts(task) + MARGIN_SEC
            started = time.monotonic()
            try:
                outcome = await asyncio.wait_for(
                    arun_trial(
                        task, IMPORT_PATH, agent_kwargs={"behaviour": behaviour}, trials_dir=trials_dir,
                        agent_timeout_sec=AGENT_TIMEOUT_SEC,
                    ),
                    timeout=limit,
                )  # fmt: skip
                row = {"reward": outcome.reward, "error": outcome.error, "why": (outcome.error_message or "")[:200]}
            except TimeoutError:
                row = {"reward": None, "error": "HUNG", "why": f"no end within {limit:g} s"}
            except MachineError as exc:
                stopped = str(exc)[:300]
                row = {"reward": None, "error": "machine", "why": stopped}
            row.update(task=task.name, behaviour=behaviour, seconds=round(time.monotonic() - started, 1), limit=limit)
            rows.append(row)
            print(
                f"{len(rows):4d}/{n_trials} {task.name:28s} {behaviour:22s} reward={row['reward']} "
                f"error={row['error']} {row['seconds']:.1f}s",
                file=sys.stderr,
                flush=True,
            )

    await asyncio.gather(*(one(task, behaviour) for task, behaviour in jobs))
    return {"rows": rows, "machine_stop": stopped}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=48)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--at-once", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args()
    quiet_harbor_logs()
    disk_before, started = disk_used(), time.monotonic()
    with tempfile.TemporaryDirectory(prefix="autoenv-chaos-") as tmp:
        result = asyncio.run(soak(args.trials, args.seed, args.at_once, Path(tmp) / "trials"))
        ids = sandbox_ids(Path(tmp) / "trials")
        new = settle(ids)
    rows = result["rows"]
    slowest = max(rows, key=lambda r: r["seconds"] / r["limit"], default=None)
    hung = ("HUNG", str(ErrorKind.HUNG))  # past the soak's own limit, or cancelled at the trial's deadline
    verdicts = collections.Counter(
        "hung"
        if r["error"] in hung
        else f"reward {r['reward']:g}"
        if r["reward"] is not None
        else f"error {r['error']}"
        for r in rows
    )
    kinds = collections.Counter(r["error"] or "-" for r in rows)
    without_verdict = [
        r for r in rows if r["error"] in hung or (r["reward"] is None and party(r["error"]) is not Party.MACHINE)
    ]
    summary = {
        "machine": machine(),
        "trials": len(rows),
        "wall_s": round(time.monotonic() - started, 1),
        "verdicts": dict(verdicts),
        "error_kinds": dict(kinds),
        "by_behaviour": {
            b: dict(
                collections.Counter(str(r["reward"]) + "/" + (r["error"] or "-") for r in rows if r["behaviour"] == b)
            )
            for b in sorted({r["behaviour"] for r in rows})
        },
        "slowest": slowest,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "disk_before_gb": round(disk_before / 1e9, 2),
        "disk_after_gb": round(disk_used() / 1e9, 2),
        "sandboxes": len(ids),
        "left_over": new,
        "machine_stop": result["machine_stop"],
        "without_verdict": without_verdict,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"chaos soak on {summary['machine']}: {summary['trials']} trials in {summary['wall_s']} s")
        print(f"  verdicts:      {dict(verdicts)}")
        print(f"  error kinds:   {dict(kinds)}")
        if slowest:
            print(
                f"  slowest:       {slowest['seconds']} s of {slowest['limit']:g} s allowed "
                f"({slowest['task']}, {slowest['behaviour']})"
            )
        print(f"  harness peak:  {summary['peak_rss_mb']} MB resident")
        print(f"  host disk:     {summary['disk_before_gb']} GB before, {summary['disk_after_gb']} GB after")
        parts = sum(map(len, new.values()))
        print(f"  left over:     {parts} parts of the {len(ids)} sandboxes the trials ran in {new if parts else ''}")
        for behaviour, counts in summary["by_behaviour"].items():
            print(f"    {behaviour:22s} {counts}")
        if without_verdict:
            print(f"  WITHOUT A VERDICT: {without_verdict}")
    bad = bool(without_verdict) or any(new.values())
    return 1 if bad else 0


if __name__ == "__main__":
    os.environ.setdefault("AUTOENV_TRIALS_AT_ONCE", "2")
    sys.exit(main())
