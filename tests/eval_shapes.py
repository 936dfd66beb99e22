"""The documented shapes of the eval formats, as checks on a written file.

* OpenAI chat fine-tuning JSONL (the fine-tuning guide's format rules): each line an
  object with ``messages`` (and optionally ``tools``, ``parallel_tool_calls``); each
  message a known role with only that role's keys; string content (an assistant that
  calls tools may have null content); every ``tool_calls`` entry answered by a ``tool``
  message with its id before the next assistant or user message, no ``tool`` message
  that answers nothing; at least one user message, and the last message an assistant's.
* promptfoo test cases (the configuration reference's Test Case): ``description``,
  ``vars``, ``assert`` (each with a ``type``), ``metadata``, nothing else used here.
* Langfuse dataset items (``create_dataset_item``): ``input``, ``expected_output``,
  ``metadata``.
* LangSmith examples (``ExampleCreate``): ``inputs`` and ``outputs`` objects, ``metadata``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

_CHAT_MESSAGE = {
    "type": "object",
    "required": ["role", "content"],
    "properties": {
        "role": {"enum": ["system", "user", "assistant", "tool"]},
        "content": {"type": ["string", "null"]},
        "tool_calls": {"type": "array"},
        "tool_call_id": {"type": "string"},
        "name": {"type": "string"},
    },
    "additionalProperties": False,
}

PROMPTFOO_TEST = {
    "type": "object",
    "required": ["vars", "assert"],
    "properties": {
        "description": {"type": "string"},
        "vars": {"type": "object", "required": ["messages"],
                 "properties": {"messages": {"type": "array", "items": _CHAT_MESSAGE}}},
        "assert": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["type", "value"],
            "properties": {"type": {"type": "string"}, "value": {"type": "string"}}}},
        "metadata": {"type": "object"},
    },
    "additionalProperties": False,
}

LANGFUSE_ITEM = {
    "type": "object",
    "required": ["input", "expected_output", "metadata"],
    "properties": {
        "input": {"type": "object", "required": ["messages"]},
        "expected_output": {"type": "object", "required": ["role", "content"]},
        "metadata": {"type": "object", "required": ["session_id", "turn"]},
    },
    "additionalProperties": False,
}

LANGSMITH_EXAMPLE = {
    "type": "object",
    "required": ["inputs", "outputs"],
    "properties": {
        "inputs": {"type": "object", "required": ["messages"]},
        "outputs": {"type": "object", "required": ["messages"]},
        "metadata": {"type": "object", "required": ["session_id", "turn"]},
    },
    "additionalProperties": False,
}

GENERIC = {
    "type": "object",
    "required": ["input", "expected", "metadata"],
    "properties": {
        "input": {"type": "array", "items": _CHAT_MESSAGE},
        "expected": {"type": "object", "required": ["role", "content"]},
        "metadata": {"type": "object", "required": ["session_id", "turn", "store"]},
    },
    "additionalProperties": False,
}


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def check_openai_example(doc: dict[str, Any]) -> None:
    assert set(doc) <= {"messages", "tools", "parallel_tool_calls"}, doc.keys()
    messages = doc["messages"]
    assert messages and isinstance(messages, list)
    open_calls: set[str] = set()
    for m in messages:
        jsonschema.validate(m, _CHAT_MESSAGE)
        role = m["role"]
        if role == "tool":
            assert m["tool_call_id"] in open_calls, ("a tool message answers no open call", m)
            open_calls.discard(m["tool_call_id"])
            assert isinstance(m["content"], str)
            continue
        assert not open_calls, ("calls left unanswered before", m)
        assert "tool_call_id" not in m
        if role == "assistant" and m.get("tool_calls"):
            for c in m["tool_calls"]:
                assert set(c) == {"id", "type", "function"} and c["type"] == "function"
                assert set(c["function"]) == {"name", "arguments"}
                json.loads(c["function"]["arguments"])
                open_calls.add(c["id"])
        else:
            assert "tool_calls" not in m and isinstance(m["content"], str), m
    assert not open_calls
    assert any(m["role"] == "user" for m in messages)
    assert messages[-1]["role"] == "assistant" and messages[-1]["content"]
    for tool in doc.get("tools", []):
        assert tool["type"] == "function" and tool["function"]["parameters"]["type"] == "object"


def promptfoo_cases(path: Path) -> list[dict[str, Any]]:
    """The test cases of a promptfoo file: JSON, or the YAML block list fluxgui writes
    (each entry a JSON flow mapping: YAML reads JSON as flow style)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        cases = json.loads(text)
    else:
        body = [line for line in text.splitlines() if line and not line.startswith("#")]
        cases = [] if body == ["[]"] else [json.loads(line[2:]) for line in body if line.startswith("- ")]
        assert len(cases) == len(body)
    for case in cases:
        jsonschema.validate(case, PROMPTFOO_TEST)
    return cases


def check_file(path: Path, fmt: str) -> list[dict[str, Any]]:
    """The records of an eval file, each checked against its format's shape."""
    if fmt == "promptfoo":
        return promptfoo_cases(path)
    docs = lines(path)
    for doc in docs:
        if fmt == "openai":
            check_openai_example(doc)
        else:
            jsonschema.validate(doc, {"jsonl": GENERIC, "langfuse": LANGFUSE_ITEM, "langsmith": LANGSMITH_EXAMPLE}[fmt])
    return docs
