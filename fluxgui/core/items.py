"""Checking messages and items before they are written.

An edited Agents SDK item must still be an item the SDK can hand back to a model: the
fields its converters read for that item type are present and of the right JSON type.
A flux message is a role, a text and an optional metadata object.
Each check raises :class:`InvalidItem` with one line naming the first problem.

Compaction items (``{"type": "compaction", "encrypted_content": …}``, what the Agents SDK's
``OpenAIResponsesCompactionSession`` writes after ``responses.compact``) are recognised by
:func:`is_compaction_item`, the SDK's own test; :func:`compaction_candidates` picks what
the SDK would compact (never a user message, never a compaction item).
"""

from __future__ import annotations

from typing import Any

from .errors import InvalidItem

MESSAGE_ROLES = ("user", "assistant", "system", "developer")
#: content part types and the string field each must carry
_PART_TEXT = {
    "input_text": "text",
    "output_text": "text",
    "text": "text",
    "summary_text": "text",
    "reasoning_text": "text",
    "refusal": "refusal",
}
#: item type → fields that must be strings
_REQUIRED_STRINGS: dict[str, tuple[str, ...]] = {
    "function_call": ("call_id", "name", "arguments"),
    "function_call_output": ("call_id",),
    "custom_tool_call": ("call_id", "name", "input"),
    "custom_tool_call_output": ("call_id",),
    "computer_call": ("call_id",),
    "computer_call_output": ("call_id",),
    "local_shell_call": ("call_id",),
    "local_shell_call_output": ("id",),
    "shell_call": ("call_id",),
    "shell_call_output": ("call_id",),
    "apply_patch_call": ("call_id",),
    "apply_patch_call_output": ("call_id",),
    "mcp_call": ("id", "name", "server_label", "arguments"),
    "mcp_list_tools": ("id", "server_label"),
    "mcp_approval_request": ("id", "name", "server_label", "arguments"),
    "mcp_approval_response": ("approval_request_id",),
    "file_search_call": ("id",),
    "web_search_call": ("id",),
    "image_generation_call": ("id",),
    "code_interpreter_call": ("id",),
    "item_reference": ("id",),
    "compaction": ("encrypted_content",),
}
#: the ``type`` of a compaction item
COMPACTION = "compaction"
_OUTPUT_TYPES = {"function_call_output", "custom_tool_call_output", "computer_call_output"}


def _where(item_type: str) -> str:
    return f"a {item_type} item" if item_type != "message" else "a message"


def _check_parts(parts: Any, field: str, item_type: str) -> None:
    if isinstance(parts, str):
        return
    if not isinstance(parts, list):
        raise InvalidItem(f"{_where(item_type)} needs {field!r} as a text or a list of parts")
    for n, part in enumerate(parts, 1):
        if isinstance(part, str) and item_type != "message":
            continue
        if not isinstance(part, dict):
            raise InvalidItem(f"part {n} of {field!r} must be a JSON object")
        part_type = part.get("type")
        if not isinstance(part_type, str) or not part_type:
            raise InvalidItem(f"part {n} of {field!r} needs a \"type\"")
        text_field = _PART_TEXT.get(part_type)
        if text_field and not isinstance(part.get(text_field), str):
            raise InvalidItem(f"part {n} of {field!r} ({part_type}) needs {text_field!r} as text")


def validate_item(item: Any, *, original_type: str | None = None) -> dict[str, Any]:
    """Return ``item`` if it is a valid Agents SDK input item, else raise ``InvalidItem``.

    Known item types are checked field by field. An item type fluxgui does not know is
    only accepted when it is the type the item already had (it cannot be checked, and
    it is not made up by the edit).
    """
    if not isinstance(item, dict):
        raise InvalidItem(f"an item must be a JSON object, not {json_type(item)}")
    item_type = item.get("type", "message")
    if not isinstance(item_type, str) or not item_type:
        raise InvalidItem('an item\'s "type" must be a non-empty text')
    if item_type == "message":
        role = item.get("role")
        if role not in MESSAGE_ROLES:
            raise InvalidItem(
                f"a message needs \"role\" as one of {', '.join(MESSAGE_ROLES)} "
                f"(not {_show(role)})"
            )
        if "content" not in item:
            raise InvalidItem('a message needs "content"')
        _check_parts(item["content"], "content", item_type)
        return item
    if item_type == "reasoning":
        summary = item.get("summary")
        if not isinstance(summary, list):
            raise InvalidItem('a reasoning item needs "summary" as a list of parts')
        _check_parts(summary, "summary", item_type)
        if "content" in item and item["content"] is not None:
            _check_parts(item["content"], "content", item_type)
        return item
    required = _REQUIRED_STRINGS.get(item_type)
    if required is None:
        if item_type != original_type:
            raise InvalidItem(f"unknown item type {_show(item_type)}")
        return item
    for name in required:
        if not isinstance(item.get(name), str):
            raise InvalidItem(f"{_where(item_type)} needs {name!r} as text")
    if item_type in _OUTPUT_TYPES:
        if "output" not in item:
            raise InvalidItem(f'{_where(item_type)} needs "output"')
        if item_type != "computer_call_output":
            _check_parts(item["output"], "output", item_type)
    return item


def kept_as_stored(metadata: Any, stored: Any) -> bool:
    """Metadata that is not an object, written back exactly as the row held it (flux's
    own are objects; fluxgui makes no other kind, but keeps one it finds)."""
    return stored is not None and type(metadata) is type(stored) and metadata == stored


def validate_flux_message(message: Any, *, stored_metadata: Any = None) -> dict[str, Any]:
    """Check a flux message dict (``role``, ``content``, optional ``metadata`` object,
    or the message's ``stored_metadata`` unchanged, whatever JSON value it is)."""
    if not isinstance(message, dict):
        raise InvalidItem(f"a message must be a JSON object, not {json_type(message)}")
    role = message.get("role", "user")
    if not isinstance(role, str) or not role.strip():
        raise InvalidItem("a message needs a role (a non-empty text)")
    content = message.get("content", "")
    if content is not None and not isinstance(content, str):
        raise InvalidItem(f"a message's content must be text, not {json_type(content)}")
    metadata = message.get("metadata")
    if not (metadata is None or isinstance(metadata, dict) or kept_as_stored(metadata, stored_metadata)):
        raise InvalidItem(f"metadata must be a JSON object, not {json_type(metadata)}")
    return message


def json_type(value: Any) -> str:
    """How a message names a JSON value's type ("an object", "a list", …)."""
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a text",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# --------------------------------------------------------------------------- compaction


def is_compaction_item(item: Any) -> bool:
    """Whether ``item`` is a compaction item, by the Agents SDK's rule (a dict whose
    ``type`` is ``"compaction"``; its ``encrypted_content`` is opaque). The SDK keeps such
    items in the model input as they are and never compacts them again."""
    return isinstance(item, dict) and item.get("type") == COMPACTION


def is_user_item(item: Any) -> bool:
    """Whether ``item`` is a user message, by the Agents SDK's compaction rule (a
    ``message`` item with role ``user``, or an easy message with a role ``user`` and
    content)."""
    if not isinstance(item, dict):
        return False
    if item.get("type") == "message":
        return item.get("role") == "user"
    return item.get("role") == "user" and "content" in item


def compaction_candidates(items: list[Any]) -> list[Any]:
    """The items ``OpenAIResponsesCompactionSession`` counts as candidates for compaction
    (its ``select_compaction_candidate_items``): all but user messages and compaction
    items."""
    return [i for i in items if not (is_user_item(i) or is_compaction_item(i))]
