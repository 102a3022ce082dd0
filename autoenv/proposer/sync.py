"""Copying the proposer's workspace into its sandbox and back (everything it made, inputs excepted)."""

from __future__ import annotations

import shlex
import shutil

from harbor.environments.base import BaseEnvironment

from autoenv.proposer.child import CHILD, CHILD_STUB, SANDBOX_ROOT
from autoenv.proposer.workspace import Workspace


async def upload_workspace(environment: BaseEnvironment, workspace: Workspace) -> None:
    await environment.exec(f"mkdir -p {SANDBOX_ROOT}", timeout_sec=30)
    for entry in workspace.files_for_sandbox():
        target = f"{SANDBOX_ROOT}/{entry.name}"
        if entry.is_dir():
            await environment.upload_dir(entry, target)
        else:
            await environment.upload_file(entry, target)
    # our own records of child verdicts are host bookkeeping, not the proposer's files
    stub = shlex.quote(CHILD_STUB)
    await environment.exec(
        f"find {SANDBOX_ROOT}/tasks -name .autoenv -type d -prune -exec rm -rf {{}} + ; "
        f"mkdir -p /usr/local/bin && printf '%s' {stub} > /usr/local/bin/{CHILD} && chmod +x /usr/local/bin/{CHILD}",
        timeout_sec=60,
        user="root",
    )


async def task_hashes(environment: BaseEnvironment) -> dict[str, str]:
    res = await environment.exec(
        f"cd {SANDBOX_ROOT}/tasks 2>/dev/null && for d in */; do d=${{d%/}}; "
        '[ -f "$d/task.toml" ] && printf \'%s %s\\n\' "$d" "$(find "$d" -type f -not -path \'*/.autoenv/*\' -print0 | '
        'sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)"; done; true',
        timeout_sec=60,
    )
    out = {}
    for line in (res.stdout or "").splitlines():
        name, _, digest = line.partition(" ")
        if name and digest:
            out[name] = digest
    return out


async def download_workspace(environment: BaseEnvironment, workspace: Workspace, attempt: int) -> None:
    staging = workspace.root / ".proposer" / f"staging-{attempt}"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    # everything the proposer keeps in its workspace comes back (a generator script its lessons point to, notes,
    # a data folder), except the inputs the harness rewrites each attempt and hidden names (host bookkeeping)
    listing = await environment.exec(
        f'cd {SANDBOX_ROOT} && for e in * ; do [ -d "$e" ] && echo "d $e" || {{ [ -f "$e" ] && echo "f $e"; }}; done',
        timeout_sec=60,
    )
    for line in (listing.stdout or "").splitlines():
        kind, _, name = line.partition(" ")
        if not name or name in Workspace.INPUTS or "/" in name or name.startswith("."):
            continue
        try:
            if kind == "d":
                await environment.download_dir(f"{SANDBOX_ROOT}/{name}", staging / name)
            elif kind == "f":
                await environment.download_file(f"{SANDBOX_ROOT}/{name}", staging / name)
        except FileNotFoundError:
            continue
    workspace.sync_from(staging)
    shutil.rmtree(staging, ignore_errors=True)
