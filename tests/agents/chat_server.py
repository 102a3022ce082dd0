"""A real HTTP server on loopback that speaks OpenAI chat completions by replaying a recording.

A recording is a list of exchanges ``{"response": {"status", "headers", "body"}, "expect": {...}, "delay_sec": s}``.
Each POST to ``/v1/chat/completions`` gets the next response. ``expect`` states
what the request at that position must look like (tools offered or not, role
of the last message, text it contains, same body as the previous request);
mismatches are collected in :attr:`ReplayServer.problems` rather than raised in
the server thread, so a test can assert on them with a readable message.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
MODEL = "replay/policy-7b"


def load_recording(name: str) -> list[dict[str, Any]]:
    return json.loads((FIXTURES / name).read_text())


# -- vLLM-shaped responses ---------------------------------------------------------------


def _ids(text: str, salt: int) -> list[int]:
    return [
        (salt * 7919 + i * 104729 + sum(map(ord, text[i * 4 : i * 4 + 4]))) % 151_000
        for i in range(max(1, (len(text) + 3) // 4))
    ]


def completion(
    turn: int,
    *,
    content: str | None = None,
    calls: list[tuple[str, Any]] | None = None,
    rollout: bool = True,
    version: str | None = "step-42",
    prompt_len: int | None = None,
    finish_reason: str | None = None,
) -> dict[str, Any]:
    tool_calls = None
    if calls:
        tool_calls = [
            {
                "id": f"chatcmpl-tool-{turn}{i}",
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for i, (name, args) in enumerate(calls)
        ]
    generated = (content or "") + json.dumps(tool_calls or [])
    completion_ids = _ids(generated, turn)
    prompt_ids = _ids("p" * (prompt_len or 300 * turn), 1000 + turn)
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": content, "tool_calls": tool_calls or [], "reasoning_content": None},
        "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
    }
    body: dict[str, Any] = {
        "id": f"chatcmpl-replay-{turn}",
        "object": "chat.completion",
        "created": 1_760_000_000 + turn,
        "model": MODEL,
        "choices": [choice],
        "usage": {
            "prompt_tokens": len(prompt_ids),
            "completion_tokens": len(completion_ids),
            "total_tokens": len(prompt_ids) + len(completion_ids),
            "prompt_tokens_details": {"cached_tokens": 64 if turn > 1 else 0},
        },
    }
    if rollout:
        choice["logprobs"] = {
            "content": [
                {"token": f"t{t}", "logprob": -round(0.001 * (t % 997), 6), "bytes": None, "top_logprobs": []}
                for t in completion_ids
            ]
        }
        choice["token_ids"] = completion_ids
        body["prompt_token_ids"] = prompt_ids
    else:
        choice["logprobs"] = None
    headers = {"x-policy-version": version} if version else {}
    return {"status": 200, "headers": headers, "body": body}


def error(
    status: int, message: str, kind: str = "invalid_request_error", headers: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "status": status,
        "headers": headers or {},
        "body": {"error": {"message": message, "type": kind, "param": None, "code": status}},
    }


class ReplayServer:
    def __init__(self, exchanges: list[dict[str, Any]], *, api_key: str | None = None, prefix: str = "/v1"):
        self.exchanges = list(exchanges)
        self.api_key = api_key
        self.prefix = prefix
        self.requests: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self._lock = threading.Lock()
        self._served = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_GET(self) -> None:
                if self.path == f"{server.prefix}/models":
                    self._send(200, {"object": "list", "data": [{"id": "replay", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode(errors="replace")}
                with server._lock:
                    server.requests.append(
                        {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
                    )
                    if self.path != f"{server.prefix}/chat/completions":
                        self._send(404, {"error": {"message": f"Not Found: {self.path}", "type": "not_found"}})
                        return
                    if server.api_key is not None and self.headers.get("authorization") != f"Bearer {server.api_key}":
                        self._send(
                            401,
                            {
                                "error": {
                                    "message": "Incorrect API key provided.",
                                    "type": "invalid_request_error",
                                    "code": "invalid_api_key",
                                }
                            },
                        )
                        return
                    if server._served >= len(server.exchanges):
                        server.problems.append(f"request {len(server.requests)} came after the recording ended")
                        self._send(500, {"error": {"message": "replay exhausted", "type": "server_error"}})
                        return
                    exchange = server.exchanges[server._served]
                    server._served += 1
                    server._check(exchange.get("expect") or {}, body)
                    response = exchange["response"]
                delay = exchange.get("delay_sec")
                if delay:  # a slow model: outside the lock so the server stays responsive
                    time.sleep(delay)
                self._send(response.get("status", 200), response.get("body", {}), response.get("headers") or {})

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, str(value))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.prefix}"

    @property
    def served(self) -> int:
        return self._served

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

    def _check(self, expect: dict[str, Any], body: dict[str, Any]) -> None:
        n = len(self.requests)
        messages = body.get("messages") or []
        if "tools" in expect and bool(body.get("tools")) != expect["tools"]:
            self.problems.append(f"request {n}: tools offered={bool(body.get('tools'))}, expected {expect['tools']}")
        if "n_messages" in expect and len(messages) != expect["n_messages"]:
            self.problems.append(f"request {n}: {len(messages)} messages, expected {expect['n_messages']}")
        if "last_role" in expect and (not messages or messages[-1].get("role") != expect["last_role"]):
            self.problems.append(
                f"request {n}: last message role {messages[-1].get('role') if messages else None}, expected "
                f"{expect['last_role']}"
            )
        if "tool_call_id" in expect and (not messages or messages[-1].get("tool_call_id") != expect["tool_call_id"]):
            self.problems.append(
                f"request {n}: last tool_call_id {messages[-1].get('tool_call_id') if messages else None}, expected "
                f"{expect['tool_call_id']}"
            )
        for text in expect.get("contains", []):
            if text not in json.dumps(messages):
                self.problems.append(f"request {n}: messages do not contain {text!r}")
        if expect.get("same_as_previous") and len(self.requests) > 1 and self.requests[-2]["body"] != body:
            self.problems.append(f"request {n}: a retry must resend the same body")
        for key, value in (expect.get("params") or {}).items():
            actual = body.get(key, "<absent>")
            if actual != value:
                self.problems.append(f"request {n}: {key}={actual!r}, expected {value!r}")

    def __enter__(self) -> ReplayServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
