"""The server's answers, checked before they are used.

The ``openai`` client builds its models without validating them: a proxy's ``200`` whose
body is JSON of another shape (``{"data": 5}``, ``[]``, an item without an id, an empty
page that says more follow) would come out as a ``TypeError`` deep in a read, or as a
page that silently ends a conversation early. So the reads and writes take the raw
answer (``with_raw_response``), check the JSON is in the API's shape here, and only then
let the client build its models. Anything else raises :class:`NotTheApi` (a
``ValueError``, as a body that is not JSON does), which
:meth:`~.client.ConversationsBackend.failing` reports as one line: an error, never the
end of a conversation.
"""

from __future__ import annotations

import json
from typing import Any

from .items import dump


class NotTheApi(ValueError):
    """An answer that is JSON but not in the shape the API sends."""


def _document(raw: Any) -> Any:
    return json.loads(raw.content)  # json.JSONDecodeError (a ValueError) when not JSON


def item_page(raw: Any) -> tuple[list[dict[str, Any]], bool]:
    """A ``ConversationItemList`` answer (the client's raw response): its items as the
    SDK's ``get_items`` gives them and whether more follow."""
    doc = _document(raw)
    if not isinstance(doc, dict):
        raise NotTheApi("an item list must be a JSON object")
    data, more = doc.get("data"), doc.get("has_more")
    if not isinstance(data, list) or not isinstance(more, bool):
        raise NotTheApi("an item list has a 'data' list and a 'has_more' flag")
    if not all(isinstance(i, dict) and isinstance(i.get("id"), str) and i["id"] for i in data):
        raise NotTheApi("every item has an id")
    if more and not data:
        raise NotTheApi("an empty page cannot have more after it")
    return [dump(i) for i in raw.parse().data], more


def conversation_id(raw: Any) -> str:
    """The id of a ``Conversation`` answer (a new conversation)."""
    doc = _document(raw)
    cid = doc.get("id") if isinstance(doc, dict) else None
    if not isinstance(cid, str) or not cid:
        raise NotTheApi("a conversation has an id")
    return cid
