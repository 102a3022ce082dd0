"""The action contract: tool calls and the plain-text fallback format."""

from __future__ import annotations

import pytest

from autoenv.shared.actions import (
    TOOL_DEFINITIONS,
    TOOL_NAMES,
    FinishAction,
    InvalidActionError,
    ReadFileAction,
    RunAction,
    WriteFileAction,
    action_from_tool_call,
    action_to_tool_call,
    parse_text_actions,
)


def test_fenced_blocks_become_actions_in_order():
    text = (
        "First I look around.\n\n"
        "```run\nls -la\n```\n"
        "```read_file /app/a.py\n```\n"
        "```write_file /app/out.txt\nhello\nworld\n```\n"
        "```finish\nall done\n```\n"
    )
    assert parse_text_actions(text) == [
        RunAction(command="ls -la"),
        ReadFileAction(path="/app/a.py"),
        WriteFileAction(path="/app/out.txt", content="hello\nworld\n"),
        FinishAction(message="all done"),
    ]


def test_longer_fence_allows_backticks_inside_a_file():
    text = "````write_file README.md\n# Title\n```\ncode\n```\n````"
    assert parse_text_actions(text) == [WriteFileAction(path="README.md", content="# Title\n```\ncode\n```\n")]


def test_empty_write_block_writes_an_empty_file():
    assert parse_text_actions("```write_file /tmp/empty\n```") == [WriteFileAction(path="/tmp/empty", content="")]


def test_bash_blocks_run_and_other_languages_are_just_text():
    text = "Here is some python:\n```python\nprint(1)\n```\nNow run it:\n```bash\npython3 x.py && echo ok\n```"
    assert parse_text_actions(text) == [RunAction(command="python3 x.py && echo ok")]


@pytest.mark.parametrize(
    "text",
    [
        '{"action": "run", "command": "ls"}',
        '```json\n{"action": "run", "command": "ls"}\n```',
        '[{"action": "run", "command": "ls"}]',
        '<tool_call>\n{"name": "run", "arguments": {"command": "ls"}}\n</tool_call>',
        '{"action": "run", "command": "ls", "reason": "look first"}',
    ],
)
def test_json_shapes_models_fall_back_to(text):
    assert parse_text_actions(text) == [RunAction(command="ls")]


@pytest.mark.parametrize(
    "text, why",
    [
        ("I think the answer is 42.", "contains no action"),
        ("```python\nprint(1)\n```", "contains no action"),
        ("```write_file /app/x.py\nimport os\n", "not closed"),
        ("```write_file\nhello\n```", "needs a path"),
        ("```run\n\n```", "empty"),
        ('{"action": "delete", "path": "/"}', "unknown action 'delete'"),
        ('{"action": "run"}', "bad arguments for run"),
        ('{"action": "run", "command": "ls"', "not valid JSON"),
    ],
)
def test_unusable_replies_say_why(text, why):
    with pytest.raises(InvalidActionError, match=why):
        parse_text_actions(text)


def test_tool_calls_are_validated():
    assert action_from_tool_call("write_file", '{"path": "a", "content": "x"}') == WriteFileAction(
        path="a", content="x"
    )
    assert action_from_tool_call("finish", "") == FinishAction()
    with pytest.raises(InvalidActionError, match="not valid JSON"):
        action_from_tool_call("run", '{"command": "ls')
    with pytest.raises(InvalidActionError, match="bad arguments for write_file"):
        action_from_tool_call("write_file", '{"path": "a"}')
    with pytest.raises(InvalidActionError, match="unknown action 'browse'"):
        action_from_tool_call("browse", "{}")


def test_tool_schemas_match_the_action_models():
    for tool in TOOL_DEFINITIONS:
        fn = tool["function"]
        assert fn["name"] in TOOL_NAMES
        required = set(fn["parameters"]["required"])
        example = {
            "run": {"command": "x"},
            "read_file": {"path": "p"},
            "write_file": {"path": "p", "content": ""},
            "finish": {"message": "m"},
        }[fn["name"]]
        assert required <= set(example)
        action = action_from_tool_call(fn["name"], example)
        assert action_to_tool_call(action) == (fn["name"], example)
