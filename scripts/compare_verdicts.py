"""Validate the bundled tasks (examples/tasks) and the reviewed ones (tests/validate/reviewed) with every check,
and write or compare their verdicts check by check.

    python scripts/compare_verdicts.py snapshot before.json     # take the verdicts of the code as it is
    python scripts/compare_verdicts.py compare before.json      # validate again, exit 1 on any difference
    python scripts/compare_verdicts.py compare before.json NAME...   # only these (e.g. examples/csv-statistic)

``compare`` also writes what it found to ``before.after.json``.

A refactor of validation must leave every check's verdict (pass / FAIL / skip) and summary as it was; summaries
are compared with their numbers blanked (they hold timings). A check newer than the snapshot is compared only
when it fails. Each task is validated on a fresh copy with ``all_checks`` (a full report) and without its recorded
verdicts.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path

from autoenv.validate.validation import ValidationSettings, avalidate_task

ROOT = Path(__file__).resolve().parent.parent
REVIEWED = ROOT / "tests" / "validate" / "reviewed"


def targets() -> list[tuple[str, Path, bool]]:
    labels = tomllib.loads((REVIEWED / "labels.toml").read_text())
    out = [(f"examples/{p.name}", p, True) for p in sorted((ROOT / "examples" / "tasks").iterdir()) if p.is_dir()]
    out += [
        (f"reviewed/{p.name}", p, not labels.get(p.name, {}).get("no_oracle", False))
        for p in sorted(REVIEWED.iterdir())
        if p.is_dir()
    ]
    return out


def shape(summary: str) -> str:
    """A summary without what changes from run to run: timings, trial folders, whether the image was cached."""
    summary = re.sub(r"/tmp/\S+", "PATH", summary.replace(" (cached image)", ""))
    return re.sub(r"\d+(\.\d+)?", "#", summary)


async def verdicts(only: set[str] | None = None, jobs: int = 2) -> dict[str, dict]:
    work = Path(tempfile.mkdtemp(prefix="verdicts-"))
    gate = asyncio.Semaphore(jobs)
    out: dict[str, dict] = {}

    async def one(name: str, path: Path, oracle: bool) -> None:
        async with gate:
            task = Path(shutil.copytree(path, work / name.replace("/", "_"), ignore=shutil.ignore_patterns(".autoenv")))
            settings = ValidationSettings(oracle=oracle, all_checks=True)
            report = await avalidate_task(task, settings, trials_dir=work / "trials", record=False)
            out[name] = {
                "valid": report.valid,
                "verdict": str(report.verdict),
                "checks": {c.name: {"status": c.status, "summary": c.summary} for c in report.checks},
            }
            print(
                f"{name}: {'valid' if report.valid else 'INVALID'} "
                + " ".join(f"{c.name}={c.status}" for c in report.checks),
                flush=True,
            )

    await asyncio.gather(*(one(n, p, o) for n, p, o in targets() if only is None or n in only))
    shutil.rmtree(work, ignore_errors=True)
    return dict(sorted(out.items()))


def differences(before: dict[str, dict], after: dict[str, dict]) -> list[str]:
    diffs = []
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name), after.get(name)
        if a is None or b is None:
            diffs.append(f"{name}: only {'after' if a is None else 'before'}")
            continue
        if a["valid"] != b["valid"]:
            diffs.append(f"{name}: valid {a['valid']} -> {b['valid']}")
        for check in sorted(set(a["checks"]) | set(b["checks"])):
            x, y = a["checks"].get(check), b["checks"].get(check)
            if x is None and y is not None and y["status"] != "FAIL":
                continue  # a check newer than the snapshot that rejects nothing changes no verdict
            if x is None or y is None or x["status"] != y["status"] or shape(x["summary"]) != shape(y["summary"]):
                diffs.append(f"{name}: {check}: {x} -> {y}")
    return diffs


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("snapshot", "compare"):
        print(__doc__)
        return 2
    mode, path, only = argv[0], Path(argv[1]), set(argv[2:]) or None
    after = asyncio.run(verdicts(only))
    if mode == "snapshot":
        path.write_text(json.dumps(after, indent=2) + "\n")
        print(f"{len(after)} verdicts written to {path}")
        return 0
    path.with_suffix(".after.json").write_text(json.dumps(after, indent=2) + "\n")
    before = json.loads(path.read_text())
    if only is not None:
        before = {k: v for k, v in before.items() if k in only}
    diffs = differences(before, after)
    print("\n".join(diffs) or f"{len(after)} tasks: every check's verdict is unchanged")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
