"""Things stored twice: ``duplicate_output`` (a second output for a call that already
has one) and ``repeated_items`` (a run of items equal to the run just before it).

* **Outputs saved again.** A streamed run can save a tool output once more on a later
  step (the Agents SDK's ``save_result_to_session`` adds the turn's outputs again to
  what it saves next). The SDK keeps only the **last** output of each ``call_id`` when it
  builds a request (``deduplicate_input_items_preferring_latest``), so the API never
  sees the copy, but what is stored and what is sent differ, and when the copies differ
  the model sees the later one.
* **A history saved again.** Code that adds ``result.to_input_list()`` to a session the
  run already saved into stores every item twice, back to back ("2 items became 4"):
  messages are never de-duplicated, so the request fails on their repeated ids, or
  shows the model the exchange twice. Items are compared by content: the item without
  its own ``id`` (a flux row: role, content and metadata); a ``call_id`` is content.
  One message said again and again (a user retrying) is not a repeated run.

Pure functions over a session's messages in stored order, each linear in their number.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fluxgui.core.contentkey import content_key
from fluxgui.core.model import Message

from .conventions import CHAT_CALL, answer_of
from .problems import Problem, quoted

#: how many earlier places a run's first pair is tried against (bounds the worst case)
_TRIES = 64
_MOD = (1 << 61) - 1
_BASE = 1_000_003


def _ids_text(ids: Sequence[int]) -> str:
    return ", ".join(f"#{i}" for i in ids)


def duplicate_outputs(seq: Sequence[Message]) -> list[tuple[int, Problem]]:
    """One ``duplicate_output`` per call answered more than once: the ids of all its
    outputs, first to last."""
    where: dict[tuple[str, str], list[int]] = {}
    kinds: dict[tuple[str, str], str] = {}
    for i, m in enumerate(seq):
        answer = answer_of(m)
        if answer is not None:
            key = (answer.call_id, answer.call_type)
            where.setdefault(key, []).append(i)
            kinds.setdefault(key, "tool message" if answer.call_type == CHAT_CALL else answer.type)
    found: list[tuple[int, Problem]] = []
    for (call_id, call_type), at in where.items():
        if len(at) < 2:
            continue
        outputs = [seq[i] for i in at]
        ids = tuple(m.id for m in outputs)
        same = len({content_key(m) for m in outputs}) == 1
        kind = kinds[(call_id, call_type)]
        if same:
            what = (f"{len(ids)} identical copies ({_ids_text(ids)}): the Agents SDK sends only "
                    "the last; repair drops the later copies")
        else:
            what = (f"{len(ids)} outputs that differ ({_ids_text(ids)}): the Agents SDK sends "
                    f"only the last (#{ids[-1]}), so the model sees that one; repair keeps the "
                    "one you pick (the last unless told)")
        found.append((at[1], Problem(
            "duplicate_output", ids,
            f"{kind} for call {quoted(call_id)} is stored more than once, {what} (outputs "
            "saved again by a streamed run?)",
        )))
    return found


def repeated_runs(seq: Sequence[Message]) -> list[tuple[int, int]]:
    """``(start, length)`` of each run of at least 2 items, not all the same, equal to
    the run just before it (the longest such run first, left to right; a run found is
    not searched again)."""
    n = len(seq)
    if n < 4:
        return []
    numbers: dict[str | bytes, int] = {}
    codes = [numbers.setdefault(content_key(m), len(numbers)) for m in seq]
    # Prefix hashes: a block's hash in O(1), so each candidate costs O(1) to try.
    prefix = [0] * (n + 1)
    power = [1] * (n + 1)
    for i, c in enumerate(codes):
        prefix[i + 1] = (prefix[i] * _BASE + c + 1) % _MOD
        power[i + 1] = power[i] * _BASE % _MOD

    def block(start: int, end: int) -> int:
        return (prefix[end] - prefix[start] * power[end - start]) % _MOD

    # same[i]: how many items from i on are one and the same (a run of one message said
    # again and again is a user repeating it, not a history saved twice)
    same = [1] * (n + 1)
    for i in range(n - 2, -1, -1):
        if codes[i] == codes[i + 1]:
            same[i] = same[i + 1] + 1

    pairs: dict[tuple[int, int], list[int]] = {}
    runs: list[tuple[int, int]] = []
    i = 0
    while i < n - 1:
        pair = (codes[i], codes[i + 1])
        earlier = pairs.setdefault(pair, [])
        found = 0
        for p in earlier[:_TRIES]:  # earliest first: the longest run first
            length = i - p
            if length >= 2 and i + length <= n and same[i] < length \
                    and block(p, i) == block(i, i + length) and codes[p:i] == codes[i : i + length]:
                found = length
                break
        if found:
            runs.append((i, found))
            for j in range(i, i + found - 1):
                pairs.setdefault((codes[j], codes[j + 1]), []).append(j)
            i += found
            continue
        earlier.append(i)
        i += 1
    return runs


def repeated_items(seq: Sequence[Message]) -> list[tuple[int, Problem]]:
    """One ``repeated_items`` per repeated run: the ids of the copies (the later run)."""
    found: list[tuple[int, Problem]] = []
    for start, length in repeated_runs(seq):
        copies = seq[start : start + length]
        first = seq[start - length : start]
        found.append((start, Problem(
            "repeated_items", tuple(m.id for m in copies),
            f"{length} items (#{copies[0].id} to #{copies[-1].id}) repeat the {length} just "
            f"before them (#{first[0].id} to #{first[-1].id}) word for word, ids aside: a "
            "history saved again after a run (the model is sent it twice; repeated item ids "
            "make the API refuse the request); it may also be a user repeating an exchange "
            "word for word; repair drops the repeated run",
        )))
    return found
