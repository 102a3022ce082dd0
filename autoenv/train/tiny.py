"""A tiny causal LM built from a config, as policy v0 where no model can be downloaded.

Tests and the offline flywheel need a real Hugging Face policy (so the
training path is the one a 7B model takes) but cannot reach a model hub. This
builds one locally: a byte-level BPE tokenizer trained on a few strings (any
text still encodes, byte by byte), a chat template with ``{% generation %}``
markers, and a 2-layer Llama with random weights. Head size 32, a size
vLLM's attention kernels support, so the same folder can be served on a GPU
machine (not tried here: no GPU).

Run in the training env: ``.venv-train/bin/python -m autoenv.train.tiny --out DIR``;
from the main (3.12) side call :func:`init_policy`, which does that for you.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from autoenv.train.policy import write_policy_meta

__all__ = ["CHAT_FORMATS", "CHAT_TEMPLATE", "SPECIAL_TOKENS", "DEFAULT_CORPUS", "build_tiny_policy", "init_policy"]

SPECIAL_TOKENS = ["<|pad|>", "<|bos|>", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>", "<|tool|>"]

#: Prefix-preserving (rendering more messages only appends text), which the
#: worker's assistant-token masking relies on; no text after ``<|end|>`` so the
#: trained span ends exactly on the token the model must learn to stop with.
CHAT_TEMPLATE = (
    "{{- bos_token -}}"
    "{%- for message in messages -%}"
    "{{- '<|' + message['role'] + '|>\n' -}}"
    "{%- if message['role'] == 'assistant' -%}"
    "{%- generation -%}"
    "{{- message['content'] or '' -}}"
    "{%- for call in message.get('tool_calls') or [] -%}"
    "{{- '\n<tool_call>' + ({'name': call['function']['name'], 'arguments': call['function']['arguments']} | tojson) + "
    "'</tool_call>' -}}"
    "{%- endfor -%}"
    "{{- '<|end|>' -}}"
    "{%- endgeneration -%}"
    "{%- else -%}"
    "{{- (message['content'] or '') + '<|end|>' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|assistant|>\n' -}}{%- endif -%}"
)

#: ``autoenv``: the template above (what the flywheel's trainer and server render with). ``qwen3``: Qwen3's chat
#: template and tokens, as TRL ships them (``trl/chat_templates/qwen3.jinja``): TRL's online trainers recognise it
#: and parse its tool calls (``<tool_call>{json}</tool_call>``), so ``GRPOTrainer`` can drive the tiny policy.
CHAT_FORMATS = ("autoenv", "qwen3")

QWEN3_SPECIAL = {"pad": "<|endoftext|>", "eos": "<|im_end|>", "start": "<|im_start|>"}
#: Qwen3 keeps these as plain added tokens (decoded as text, so response parsing sees them).
QWEN3_ADDED = ["<tool_call>", "</tool_call>", "<think>", "</think>", "<tool_response>", "</tool_response>"]

DEFAULT_CORPUS = [
    "You are a terminal agent. Solve the task in the sandbox, then finish.",
    "Write a Harbor task: instruction.md, environment/Dockerfile, tests/test_outputs.py, solution/solve.sh.",
    "ls -la /app && cat /app/README.md",
    "python3 -m pytest -q tests/",
    "grep -rn 'TODO' src/ | head -20",
    "sed -n 1,40p main.py; echo done",
    "cat > /app/solution.py <<'EOF'\nimport sys\nprint(sum(int(x) for x in sys.stdin))\nEOF",
    "The command exited with code 0. Output:",
    "Traceback (most recent call last): FileNotFoundError: No such file or directory",
    "yes",
    "no",
    "finish",
    "run",
    "read_file",
    "write_file",
    '{"tool": "run", "arguments": {"command": "ls"}}',
]


def build_tiny_policy(
    out_dir: Path | str,
    corpus: list[str] | None = None,
    *,
    seed: int = 0,
    vocab_size: int = 512,
    hidden_size: int = 64,
    num_layers: int = 2,
    max_positions: int = 4096,
    chat_format: str = "autoenv",
) -> Path:
    """Train the tokenizer, build the model from a config, ``save_pretrained`` both, mark it version 0."""
    if chat_format not in CHAT_FORMATS:
        raise ValueError(f"chat format {chat_format!r}: choose one of {', '.join(CHAT_FORMATS)}")
    import torch
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    transformers.utils.logging.disable_progress_bar()

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    texts = list(corpus or DEFAULT_CORPUS)

    qwen3 = chat_format == "qwen3"
    special = list(QWEN3_SPECIAL.values()) if qwen3 else SPECIAL_TOKENS
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=1,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(texts, trainer=trainer)
    if qwen3:
        from importlib.resources import files

        tokenizer = PreTrainedTokenizerFast(
            tokenizer_object=backend,
            eos_token=QWEN3_SPECIAL["eos"],
            pad_token=QWEN3_SPECIAL["pad"],
            additional_special_tokens=[QWEN3_SPECIAL["start"]],
        )
        tokenizer.add_tokens(QWEN3_ADDED)
        tokenizer.chat_template = (files("trl") / "chat_templates" / "qwen3.jinja").read_text(encoding="utf-8")
    else:
        tokenizer = PreTrainedTokenizerFast(
            tokenizer_object=backend,
            bos_token="<|bos|>",
            eos_token="<|end|>",
            pad_token="<|pad|>",
            additional_special_tokens=SPECIAL_TOKENS[3:],
        )
        tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.model_max_length = max_positions

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=max(1, hidden_size // 32),
        num_key_value_heads=max(1, hidden_size // 32),
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = LlamaForCausalLM(config)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    write_policy_meta(
        out,
        version=0,
        parent=None,
        backend="tiny",
        seed=seed,
        n_params=sum(p.numel() for p in model.parameters()),
        vocab_size=len(tokenizer),
        chat_format=chat_format,
    )
    return out


def init_policy(
    out_dir: Path | str,
    corpus: list[str] | None = None,
    *,
    seed: int = 0,
    chat_format: str = "autoenv",
    timeout: float | None = 600,
) -> Path:
    """Policy v0 from the main (3.12) side: builds here if torch is importable, else in ``.venv-train``.

    This is the body of ``autoenv train init-policy --out DIR``.
    """
    from autoenv.train import trainenv

    if trainenv.in_train_env():
        return build_tiny_policy(out_dir, corpus, seed=seed, chat_format=chat_format)
    args = ["--out", str(Path(out_dir).resolve()), "--seed", str(seed), "--chat-format", chat_format]
    with tempfile.TemporaryDirectory(prefix="autoenv-corpus-") as tmp:
        if corpus:
            corpus_file = Path(tmp) / "corpus.json"
            corpus_file.write_text(json.dumps(corpus), encoding="utf-8")
            args += ["--corpus", str(corpus_file)]
        result = trainenv.run_module("autoenv.train.tiny", args, timeout=timeout)
    return Path(result["checkpoint"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autoenv.train.tiny", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="folder to save the model and tokenizer into")
    parser.add_argument(
        "--corpus", type=Path, help="JSON list of strings (or a text file, one per line) to train the tokenizer on"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chat-format", choices=CHAT_FORMATS, default="autoenv")
    args = parser.parse_args(argv)
    corpus = None
    if args.corpus:
        text = args.corpus.read_text(encoding="utf-8")
        corpus = (
            json.loads(text) if text.lstrip().startswith("[") else [line for line in text.splitlines() if line.strip()]
        )
    path = build_tiny_policy(args.out, corpus, seed=args.seed, chat_format=args.chat_format)
    result: dict[str, Any] = {"checkpoint": str(path), "policy_version": 0}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
