"""Serve a checkpoint on CPU over the OpenAI chat API, with the token ids and log-probs RL needs.

The flywheel's rollouts must sample from the newest policy version and record
exactly which tokens were sampled and with which log-probability, so training
can use the recorded tokens and the importance ratio. On a GPU machine vLLM
does this (:mod:`autoenv.train.serve`). On a CPU machine there is no vLLM, and
``transformers serve`` (5.x) ignores ``logprobs`` and returns no token ids
(its ``UNUSED_CHAT_COMPLETION_FIELDS``), so this module is the CPU stand-in:
Hugging Face ``generate`` behind the subset of the API the terminal agent and
the proposer use, answering in vLLM's shape:

- ``GET /v1/models``;
- ``POST /v1/chat/completions`` with ``messages``, ``tools``, ``max_tokens``
  (or ``max_completion_tokens``), ``temperature``, ``top_p``, ``seed``,
  ``logprobs`` and ``return_token_ids``; the answer carries
  ``prompt_token_ids``, ``choices[0].token_ids`` and
  ``choices[0].logprobs.content`` (the sampled token's log-probability under
  the served weights, before temperature, as vLLM's default ``raw_logprobs``),
  and the served version as ``policy_version`` and the ``x-policy-version``
  header.

The prompt is the checkpoint's own chat template (the one training renders
with); ``<tool_call>{json}</tool_call>`` spans in the output become tool calls.
Requests are served one at a time (one CPU model). It runs in the training
env: ``.venv-train/bin/python -m autoenv.train.cpu_serve --checkpoint DIR --port N``.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from autoenv.train.policy import policy_version

TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)


class CheckpointModel:
    """One loaded checkpoint and the generation the API needs."""

    def __init__(self, checkpoint: Path, *, device: str = "cpu"):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.checkpoint = checkpoint
        self.version = policy_version(checkpoint)
        self.tokenizer = AutoTokenizer.from_pretrained(checkpoint)
        self.model = AutoModelForCausalLM.from_pretrained(checkpoint, dtype=torch.float32).to(device).eval()
        self.device = device
        self.default_max_tokens = 256  # for a request that sets no limit (main() takes --default-max-tokens)
        self.lock = threading.Lock()

    def prompt_ids(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> list[int]:
        kwargs: dict[str, Any] = {"add_generation_prompt": True, "tokenize": True}
        if tools:
            kwargs["tools"] = tools
        ids = self.tokenizer.apply_chat_template(messages, **kwargs)
        if isinstance(ids, dict) or hasattr(ids, "keys"):
            ids = ids["input_ids"]
        return [int(i) for i in ids]

    def generate(
        self, prompt: list[int], *, max_tokens: int, temperature: float, top_p: float, seed: int | None
    ) -> tuple[list[int], list[float], str]:
        """Sample up to ``max_tokens``; returns (completion ids, their raw log-probs, finish reason)."""
        torch = self.torch
        eos = self.tokenizer.eos_token_id
        generator = torch.Generator(device=self.device)
        generator.manual_seed(seed if seed is not None else int(time.time_ns() % (2**31)))
        ids = torch.tensor([prompt], device=self.device)
        out_ids: list[int] = []
        out_lps: list[float] = []
        past = None
        with self.lock, torch.no_grad():
            step_input = ids
            for _ in range(max_tokens):
                result = self.model(input_ids=step_input, past_key_values=past, use_cache=True)
                past = result.past_key_values
                logits = result.logits[0, -1].float()
                raw = torch.log_softmax(logits, dim=-1)
                if temperature <= 0:
                    token = int(torch.argmax(logits))
                else:
                    probs = torch.softmax(logits / temperature, dim=-1)
                    if top_p < 1.0:
                        sorted_p, order = torch.sort(probs, descending=True)
                        keep = torch.cumsum(sorted_p, dim=-1) - sorted_p < top_p
                        probs = torch.zeros_like(probs).scatter(0, order[keep], sorted_p[keep])
                        probs = probs / probs.sum()
                    token = int(torch.multinomial(probs, 1, generator=generator))
                out_ids.append(token)
                out_lps.append(float(raw[token]))
                if token == eos:
                    return out_ids, out_lps, "stop"
                step_input = torch.tensor([[token]], device=self.device)
        return out_ids, out_lps, "length"

    def completion(self, body: dict[str, Any], served_name: str) -> dict[str, Any]:
        messages = body.get("messages") or []
        prompt = self.prompt_ids(messages, body.get("tools"))
        max_tokens = int(body.get("max_completion_tokens") or body.get("max_tokens") or self.default_max_tokens)
        temperature = float(body["temperature"]) if body.get("temperature") is not None else 1.0
        top_p = float(body["top_p"]) if body.get("top_p") is not None else 1.0
        completion_ids, logprobs, finish = self.generate(
            prompt, max_tokens=max_tokens, temperature=temperature, top_p=top_p, seed=body.get("seed")
        )
        text = self.tokenizer.decode(completion_ids, skip_special_tokens=True)
        calls = []
        for i, match in enumerate(TOOL_CALL.finditer(text)):
            try:
                data = json.loads(match.group(1))
                name, arguments = data["name"], data.get("arguments", {})
            except (ValueError, KeyError, TypeError):
                continue
            calls.append(
                {
                    "id": f"call_{uuid.uuid4().hex[:8]}_{i}",
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                    },
                }
            )
        content = TOOL_CALL.sub("", text).strip() if calls else text
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": content, "tool_calls": calls},
            "finish_reason": "tool_calls" if calls and finish == "stop" else finish,
        }
        if body.get("logprobs"):
            choice["logprobs"] = {
                "content": [
                    {"token": self.tokenizer.convert_ids_to_tokens(t), "logprob": lp, "bytes": None, "top_logprobs": []}
                    for t, lp in zip(completion_ids, logprobs)
                ]
            }
        response: dict[str, Any] = {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": served_name,
            "choices": [choice],
            "policy_version": str(self.version),
            "usage": {
                "prompt_tokens": len(prompt),
                "completion_tokens": len(completion_ids),
                "total_tokens": len(prompt) + len(completion_ids),
            },
        }
        if body.get("return_token_ids"):  # vLLM's extension; the openai client sends extra_body at the top level
            response["prompt_token_ids"] = prompt
            choice["token_ids"] = completion_ids
        return response


def make_server(model: CheckpointModel, *, host: str, port: int, served_name: str) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("x-policy-version", str(model.version))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": [
                            {
                                "id": served_name,
                                "object": "model",
                                "owned_by": "autoenv",
                                "root": str(model.checkpoint),
                                "policy_version": str(model.version),
                            }
                        ],
                    },
                )
            elif self.path.rstrip("/") == "/health":
                self._send(200, {"status": "ok"})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self) -> None:
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            except ValueError as exc:
                self._send(400, {"error": {"message": f"invalid JSON: {exc}", "type": "invalid_request_error"}})
                return
            if body.get("model") not in (None, served_name):
                self._send(
                    404,
                    {
                        "error": {
                            "message": f"the model {body.get('model')!r} does not exist; "
                            f"this server serves {served_name!r}",
                            "type": "not_found_error",
                        }
                    },
                )
                return
            if body.get("stream"):
                self._send(
                    400,
                    {
                        "error": {
                            "message": "streaming is not supported by this server",
                            "type": "invalid_request_error",
                        }
                    },
                )
                return
            try:
                self._send(200, model.completion(body, served_name))
            # the server's boundary: a failed request is a 500 for the client, not a dead server
            except Exception as exc:  # noqa: BLE001
                self._send(500, {"error": {"message": f"{type(exc).__name__}: {exc}", "type": "server_error"}})

    return ThreadingHTTPServer((host, port), Handler)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", required=True, type=Path)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--served-model-name", default="policy")
    parser.add_argument(
        "--default-max-tokens",
        type=int,
        default=256,
        help="generation limit of a request that sets none (a proposer writing whole tasks needs thousands)",
    )
    args = parser.parse_args(argv)
    model = CheckpointModel(args.checkpoint)
    model.default_max_tokens = args.default_max_tokens
    server = make_server(model, host=args.host, port=args.port, served_name=args.served_model_name)
    print(
        json.dumps({"serving": str(args.checkpoint), "version": model.version, "port": server.server_address[1]}),
        flush=True,
    )
    server.serve_forever()


if __name__ == "__main__":
    main()
