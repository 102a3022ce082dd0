"""The agentic proposer's sandbox: what it keeps between attempts, and the web access it has only when asked.

A real loopback server plays the model (its replies are recorded commands), the
proposer runs in a real sandbox of the local backend, and the web is a real HTTP
server on this machine's own address (not loopback: a sandbox with network
access reaches the internet, never the host's loopback).
"""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from proposer_helpers import needs_sandbox  # isort: skip  (puts the agent tests' chat_server on the path)
from chat_server import MODEL, ReplayServer, completion  # isort: skip

from autoenv.proposer.models import SeedCase
from autoenv.proposer.propose import propose
from autoenv.vocab import SCRIPTED_SOLVER

pytestmark = [needs_sandbox, pytest.mark.slow]

CASE = SeedCase(
    id="web-docs",
    task="a task that needs a library's docs",
    failure_mode="The agent guessed an API.",
    target_skill="read the docs before using an API",
)
PAGE = "autoenv-web-page-7f3a"


def host_address() -> str | None:
    """This machine's address on its network (what a sandbox's outbound traffic can reach)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.254", 9))  # no packet is sent; the kernel picks the outgoing address
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


class Web:
    """A web server on the host's own address, serving one page."""

    def __init__(self, address: str):
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                body = PAGE.encode()
                self.send_response(200)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer((address, 0), Handler)
        self.url = f"http://{address}:{self.httpd.server_address[1]}/docs"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()


@pytest.mark.parametrize("network", ["public", "no-network"])
def test_the_proposer_reaches_the_web_only_when_the_option_is_on(dirs, network):
    address = host_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address")
    web = Web(address)
    fetch = (
        f"python3 -c \"import urllib.request; print(urllib.request.urlopen('{web.url}', timeout=5).read().decode())\""
    )
    seen = PAGE if network == "public" else "urlopen error"
    recording = [
        {"expect": {"tools": True}, "response": completion(1, calls=[("run", {"command": fetch})])},
        {"expect": {"contains": [seen]}, "response": completion(2, calls=[("finish", {"message": "read the docs"})])},
    ]
    try:
        with ReplayServer(recording) as server:
            summary = propose(
                CASE,
                method="agentic",
                policy="openai",
                model=MODEL,
                base_url=server.url,
                out_dir=dirs["out"],
                workspace=dirs["workspace"],
                attempts=1,
                solver=SCRIPTED_SOLVER,
                network=network,
            )
    finally:
        web.close()
    assert server.problems == [] and server.served == 2, server.problems
    tool_output = server.chat_requests()[1]["messages"][-1]["content"]
    assert (PAGE in tool_output) == (network == "public"), tool_output
    assert summary.records[0].reason == "no task was produced"


def test_what_the_proposer_makes_in_its_workspace_is_there_next_attempt(dirs):
    make = (
        "mkdir -p generators && printf 'print(\"rows\")\\n' > generators/make_data.py && "
        "echo '- generate data with generators/make_data.py' >> memory/lessons.md && echo note > notes.txt"
    )
    recording = [
        {"expect": {"tools": True}, "response": completion(1, calls=[("run", {"command": make})])},
        {"expect": {}, "response": completion(2, calls=[("finish", {"message": "prepared my tools"})])},
        {
            "expect": {"contains": ["generators/make_data.py"]},
            "response": completion(3, calls=[("run", {"command": "python3 generators/make_data.py; cat notes.txt"})]),
        },
        {"expect": {}, "response": completion(4, calls=[("finish", {"message": "done"})])},
    ]
    with ReplayServer(recording) as server:
        propose(
            CASE,
            method="agentic",
            policy="openai",
            model=MODEL,
            base_url=server.url,
            out_dir=dirs["out"],
            workspace=dirs["workspace"],
            attempts=2,
            solver=SCRIPTED_SOLVER,
            network="no-network",
        )
    assert server.problems == [] and server.served == 4, server.problems
    second_attempt_saw = server.chat_requests()[3]["messages"][-1]["content"]
    assert "rows\nnote" in second_attempt_saw, second_attempt_saw
    assert (dirs["workspace"] / "generators" / "make_data.py").read_text() == 'print("rows")\n'
    assert (dirs["workspace"] / "notes.txt").read_text() == "note\n"
    assert "generators/make_data.py" in (dirs["workspace"] / "memory" / "lessons.md").read_text()


EVIL_TAR = r"""
import io, sys, tarfile
# stands in for tar -c: the archive the host extracts is whatever the proposer says it is
out = io.BytesIO()
with tarfile.open(fileobj=out, mode="w") as tar:
    def add(name, data=b"planted", kind=tarfile.REGTYPE, link=""):
        info = tarfile.TarInfo(name)
        info.type, info.linkname, info.size = kind, link, (len(data) if kind == tarfile.REGTYPE else 0)
        tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    add("./../../../../../../../../HOSTDIR/escaped-relative.txt")
    add("HOSTDIR/escaped-absolute.txt".replace("HOSTDIR", "/HOSTDIR"))
    add("./up", kind=tarfile.SYMTYPE, link="/HOSTDIR")
    add("./up/through-link.txt")
    add("./secret", kind=tarfile.SYMTYPE, link="/HOSTDIR/host-secret.txt")
    add("./ok.txt", b"kept")
sys.stdout.buffer.write(out.getvalue())
"""


def test_a_proposer_that_forges_its_workspace_archive_cannot_touch_or_read_the_host(dirs, tmp_path):
    """Red team on the workspace's way back: root in its sandbox, the proposer plants links to host paths at the
    top of /workspace and replaces tar with a program that emits path-traversal, absolute and link-through
    members. Nothing may be written outside the host workspace, no link there may lead out of it, and the
    host file the links name must not be copied in."""
    host = tmp_path / "host"
    host.mkdir()
    (host / "host-secret.txt").write_text("HOST-SECRET-4f1d")
    evil = EVIL_TAR.replace("HOSTDIR", str(host).lstrip("/"))
    plant = (
        f"ln -s {host} /workspace/hostdir && ln -s {host}/host-secret.txt /workspace/secret.txt && "
        "mkdir -p /workspace/gen && ln -s ../../../../../../../.. /workspace/gen/root && "
        f"cat > /opt/evil_tar.py <<'PY'\n{evil}\nPY\n"
        "for t in $(command -v tar) /bin/tar /usr/bin/tar; do printf '#!/bin/sh\\nexec python3 /opt/evil_tar.py\\n' > "
        "$t; chmod +x $t; done; "
        "echo planted"
    )
    recording = [
        {"expect": {"tools": True}, "response": completion(1, calls=[("run", {"command": plant})])},
        {"expect": {"contains": ["planted"]}, "response": completion(2, calls=[("finish", {"message": "done"})])},
    ]
    with ReplayServer(recording) as server:
        propose(
            CASE,
            method="agentic",
            policy="openai",
            model=MODEL,
            base_url=server.url,
            out_dir=dirs["out"],
            workspace=dirs["workspace"],
            attempts=1,
            solver=SCRIPTED_SOLVER,
            network="no-network",
        )
    assert server.problems == [] and server.served == 2, server.problems
    assert sorted(p.name for p in host.iterdir()) == ["host-secret.txt"], "something was written next to the host file"
    assert (host / "host-secret.txt").read_text() == "HOST-SECRET-4f1d"
    workspace = dirs["workspace"].resolve()
    for path in workspace.rglob("*"):
        if path.is_symlink():
            assert path.resolve().is_relative_to(workspace), f"{path} leads out of the workspace to {path.resolve()}"
        elif path.is_file():
            assert "HOST-SECRET-4f1d" not in path.read_text(errors="replace"), f"{path} holds the host file's content"
    # the absolute member lands inside the workspace (the leading "/" stripped), never at its host path
    outside = [p for p in tmp_path.rglob("escaped-*") if not p.resolve().is_relative_to(workspace)]
    assert not outside and not (Path("/") / "escaped-relative.txt").exists(), outside
