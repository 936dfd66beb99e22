"""The eval dataset formats, each as its consuming tool documents it.

* ``jsonl``: ``{"input": [chat messages], "expected": {"role": "assistant", "content",
  "tool_calls"?}, "metadata": {…}}`` a line;
* ``promptfoo``: a list of test cases (``tests: file://PATH``), each ``{"description",
  "vars": {"messages": [...]}, "assert": [{"type": "factuality", "value": answer}],
  "metadata"}``; YAML, or JSON when PATH ends with ``.json``;
* ``openai``: chat fine-tuning / evals JSONL, ``{"messages": [...], "tools"?: [...]}``,
  the history, the turn's calls and outputs and the answer as the last assistant message
  (roles system/user/assistant/tool, every ``tool_calls`` entry answered by its ``tool``
  message);
* ``langfuse``: dataset items ``{"input": {"messages"}, "expected_output": {…},
  "metadata"}`` a line (``create_dataset_item``'s fields);
* ``langsmith``: examples ``{"inputs": {"messages"}, "outputs": {"messages": [answer]},
  "metadata"}`` a line (a chat dataset's shape).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..replay.record import RecordedCall, argument_schema
from .items import EvalItem

EVAL_FORMATS = ("jsonl", "promptfoo", "openai", "langfuse", "langsmith")


def _dumps(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False)


def _tools(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The function tools the messages call, with argument shapes from their calls."""
    by_name: dict[str, list[RecordedCall]] = {}
    for d in messages:
        for c in d.get("tool_calls") or []:
            fn = c["function"]
            by_name.setdefault(fn["name"], []).append(RecordedCall(c["id"], fn["name"], fn["arguments"]))
    return [{"type": "function", "function": {"name": n, "parameters": argument_schema(calls)}}
            for n, calls in by_name.items()]


def _openai_message(d: dict[str, Any]) -> dict[str, Any]:
    """A chat message with only the keys the fine-tuning format knows."""
    doc: dict[str, Any] = {"role": d["role"], "content": d.get("content")}
    if d.get("tool_calls"):
        doc["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
            "name": c["function"]["name"], "arguments": c["function"]["arguments"]}} for c in d["tool_calls"]]
    if d["role"] == "tool":
        doc["tool_call_id"] = d.get("tool_call_id") or ""
        doc["content"] = d.get("content") or ""
    return doc


def record(item: EvalItem, fmt: str) -> dict[str, Any]:
    """One item as ``fmt`` writes it (one line of the JSONL formats, one test case)."""
    answer = {"role": "assistant", "content": item.answer}
    if fmt == "jsonl":
        return {"input": item.input, "expected": item.expected, "metadata": item.metadata}
    if fmt == "promptfoo":
        meta = {k: v for k, v in item.metadata.items() if v is not None}
        return {
            "description": f"{item.session_id} turn {item.turn}",
            "vars": {"messages": item.input},
            "assert": [{"type": "factuality", "value": item.answer}],
            "metadata": meta,
        }
    if fmt == "openai":
        messages = [_openai_message(d) for d in [*item.input, *item.steps]]
        doc: dict[str, Any] = {"messages": messages}
        tools = _tools(messages)
        if tools:
            doc["tools"] = tools
        return doc
    if fmt == "langfuse":
        return {"input": {"messages": item.input}, "expected_output": item.expected, "metadata": item.metadata}
    if fmt == "langsmith":
        return {"inputs": {"messages": item.input}, "outputs": {"messages": [answer]}, "metadata": item.metadata}
    raise ValueError(f"unknown eval format {fmt!r} (use {', '.join(EVAL_FORMATS)})")


def render(items: Iterable[EvalItem], fmt: str, *, yaml: bool = True) -> Iterable[str]:
    """The file's text, a piece at a time. promptfoo's YAML is a block list of JSON flow
    mappings, one test case a line (JSON is YAML's flow style; any YAML reader, the
    ``js-yaml`` promptfoo uses among them, reads it)."""
    if fmt == "promptfoo":
        cases = (record(i, fmt) for i in items)
        if yaml:
            yield "# promptfoo test cases written by fluxgui (use: tests: file://this-file)\n"
            empty = True
            for case in cases:
                empty = False
                yield "- " + json.dumps(case, ensure_ascii=True) + "\n"
            if empty:
                yield "[]\n"
            return
        yield "[\n"
        for n, case in enumerate(cases):
            yield ("" if n == 0 else ",\n") + _dumps(case)
        yield "\n]\n"
        return
    for i in items:
        yield _dumps(record(i, fmt)) + "\n"
