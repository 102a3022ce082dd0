"""The leak-scan agent: copies a started environment's work folders back to the host, for backends whose image
autoenv cannot read directly (the leakage check scans the copy, :func:`autoenv.validate.leakage.scan_extracted`)."""

from __future__ import annotations

import shlex
import tarfile
import uuid
from typing import override

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

from autoenv.agents.named import NamedAgent
from autoenv.agents.toolset import run_confined, upload_toolset

#: Files larger than this are not copied (nor read by the leak scan).
MAX_FILE_BYTES = 2 * 1024 * 1024

SCAN_ROOTS = (
    "/app",
    "/root",
    "/home",
    "/opt",
    "/srv",
    "/workspace",
    "/data",
    "/tests",
    "/solution",
    "/usr/local/bin",
    "/var/www",
    "/tmp",
)
SCAN_ARCHIVE = "/tmp/.autoenv-leak-scan.tgz"


class ScanAgent(NamedAgent, BaseAgent):
    """Copies the environment's work directories back to the host for :func:`scan_tree`.

    Used on backends where autoenv cannot read the built image directly
    (docker, modal, ...). It runs in the agent phase, so it sees exactly what
    an agent would, before the verifier uploads the tests. Files over 2 MB,
    hidden and package directories are left out, at most 20000 files.
    ``roots`` (comma-separated) replaces the default directories.
    """

    AGENT_NAME = "autoenv-leak-scan"

    def __init__(self, *args, roots: str | list[str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        items = roots.split(",") if isinstance(roots, str) else (roots or SCAN_ROOTS)
        self.roots = [r.strip() for r in items if r.strip().startswith("/")]

    @override
    async def setup(self, environment: BaseEnvironment) -> None:
        return

    @override
    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        roots = " ".join(shlex.quote(r) for r in self.roots)
        # validation's busybox, never the image's find/tar (see autoenv.agents.toolset); dot-folders are read
        # (an answer cached in /app/.meta is a leak); busybox tar takes no file list, so the files travel
        # through a cpio copy into a staging folder that is then packed whole
        tools = await upload_toolset(environment)
        stage = f"/tmp/.autoenv-scan-{uuid.uuid4().hex}"
        script = (
            f'cd / && for d in {roots}; do [ -e "$d" ] && echo "$d"; done > {stage}.roots; '
            f"find $(cat {stage}.roots) -xdev -type d \\( -name '.autoenv-*' -o -name site-packages -o -name "
            "dist-packages -o -name node_modules -o -name __pycache__ -o -name .git -o -path '*/lib/python*' \\) "
            f"-prune -o -type f -size -{MAX_FILE_BYTES // 1024}k ! -name '.autoenv-*' ! -name 'busybox-autoenv-*' "
            f"-print 2>/dev/null | head -n 20000 | sed 's,^/,,' > {stage}.list; mkdir -p {stage}; "
            f"cpio -o -H newc < {stage}.list 2>/dev/null | (cd {stage} && cpio -idm 2>/dev/null); "
            f"tar -czf {SCAN_ARCHIVE} -C {stage} . && rm -rf {stage} {stage}.list {stage}.roots; ls -l {SCAN_ARCHIVE}"
        )
        result = await run_confined(environment, script, tools, timeout_sec=300)
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        target = self.logs_dir / "scan.tgz"
        await environment.download_file(SCAN_ARCHIVE, target)
        extracted = self.logs_dir / "fs"
        with tarfile.open(target) as tf:
            tf.extractall(extracted, filter="data")
        (self.logs_dir / "scan.log").write_text(result.stdout + result.stderr)
        context.metadata = {"n_turns": 1}
