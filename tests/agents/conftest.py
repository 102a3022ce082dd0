"""Fixtures for the agent tests: replay servers on loopback and a tiny task."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import HELLO_DOCKERFILE
from chat_server import ReplayServer, load_recording


@pytest.fixture
def hello_task(make_task) -> Path:
    return make_task("hello", instruction='Write "hello" to /app/out.txt\n', dockerfile=HELLO_DOCKERFILE)


@pytest.fixture
def replay() -> Iterator[Any]:
    """``replay(recording_name_or_exchanges, api_key=None, prefix="/v1") -> ReplayServer`` (started)."""
    servers: list[ReplayServer] = []

    def start(recording: str | list[dict[str, Any]], **kwargs: Any) -> ReplayServer:
        exchanges = load_recording(recording) if isinstance(recording, str) else recording
        server = ReplayServer(exchanges, **kwargs).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


@pytest.fixture
def closed_port_url() -> str:
    """A loopback URL where nothing listens (the port was just released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def api_key(monkeypatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return "sk-test"
