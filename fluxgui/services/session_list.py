"""The rules of a live session list, without Qt.

A list of sessions shown page by page (the window's session list) keeps its rows in the
store's order, inserts search results where they sort, and merges what another process
changed without starting over. What that takes, apart from the Qt model that shows it:

* sort keys that order rows as the store's ``list_sessions(order=…)`` does
  (:func:`order_key`, :func:`search_key`) and where a row lands among sorted ones
  (:func:`place`, :func:`insertion_runs`);
* a refresh: which loaded rows to check again (:func:`ids_to_check`), the store reads
  (:func:`read_refresh`) and how their answers change the rows (:func:`plan_merge`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fluxgui.core.model import SessionInfo
from fluxgui.core.ports import SessionOrder
from fluxgui.core.roles import Store

#: besides its first page, each refresh re-checks this many more loaded rows (a window
#: that moves on at every refresh, so that deleted sessions further down the list are
#: noticed too without any refresh costing more than a page or two)
REFRESH_SWEEP = 200
#: ids per ``sessions_by_ids`` query
ID_BATCH = 500

SortKey = Callable[[SessionInfo], Any]


# --------------------------------------------------------------------------- order


def activity_key(info: SessionInfo) -> tuple[Any, ...]:
    """A session's activity key, comparable within one store (most recent: largest)."""
    # A store's own activity key. Only its first part (a time, for the Agents SDK) can be
    # NULL: such a session sorts as the least recent.
    key = info.sort_key
    return (bool(key) and key[0] is not None, *key)


def order_key(order: SessionOrder) -> SortKey:
    """The Python key that sorts list rows as the store's ``order`` does (ids compare by
    code point: SQLite's BINARY collation; a Postgres collation may break ties otherwise)."""
    if order == "id":
        return lambda info: info.id
    if order == "messages":
        return lambda info: (info.messages, info.id)
    return activity_key


def search_key(
    order: SessionOrder | None, descending: bool, found: dict[str, int]
) -> tuple[SortKey, bool]:
    """Sort key and direction of search results: in the order they were found
    (``found``: id → position) when no ``order`` is set, else as the store's order."""
    if order is None:
        return (lambda info: found[info.id]), False
    return order_key(order), descending


def differs(old: SessionInfo, new: SessionInfo) -> bool:
    """A row shows something else now (count, times or place)."""
    return (
        old.messages != new.messages
        or old.updated_at != new.updated_at
        or old.created_at != new.created_at
        or old.sort_key != new.sort_key
    )


def place(keys: Sequence[Any], key: Any, descending: bool) -> int:
    """Where ``key`` goes in ``keys`` (sorted in display order), after its equals."""
    lo, hi = 0, len(keys)
    while lo < hi:
        mid = (lo + hi) // 2
        if (keys[mid] >= key) if descending else (keys[mid] <= key):
            lo = mid + 1
        else:
            hi = mid
    return lo


def runs(rows: list[int]) -> list[tuple[int, int]]:
    """Sorted row numbers as ``(first, last)`` runs of consecutive rows."""
    out: list[tuple[int, int]] = []
    for row in rows:
        if out and out[-1][1] + 1 == row:
            out[-1] = (out[-1][0], row)
        else:
            out.append((row, row))
    return out


def insertion_runs(
    keys: list[Any], total: int, keyed: list[tuple[Any, SessionInfo]], descending: bool
) -> list[tuple[int, list[SessionInfo]]]:
    """Where new rows go among ``total`` shown rows whose keys are ``keys`` (ascending).

    ``keyed``: the new rows with their keys, in display order. Consecutive new rows with
    the same place become one run ``(row, rows)``; insert the runs from the last one up
    so that the places computed before any insertion stay right.
    """
    out: list[tuple[int, list[SessionInfo]]] = []
    for key, info in keyed:
        # A C-level bisect on the ascending keys gives each row its place.
        at = bisect.bisect_right(keys, key)
        pos = total - at if descending else at
        if out and out[-1][0] == pos:
            out[-1][1].append(info)
        else:
            out.append((pos, [info]))
    return out


# --------------------------------------------------------------------------- refresh


def ids_to_check(
    loaded: Sequence[str], page_size: int, sweep: int, extra: set[str]
) -> tuple[list[str], int]:
    """The loaded ids a refresh re-checks — the first page, a window of later rows that
    moves on at each refresh (from ``sweep``), and ``extra`` — and where the next
    window starts."""
    n, first = len(loaded), page_size
    ids = list(loaded[:first])
    if n > first:
        start = sweep if first <= sweep < n else first
        end = min(n, start + REFRESH_SWEEP)
        ids += loaded[start:end]
        sweep = end if end < n else first
    seen = set(ids)
    ids += sorted(sid for sid in extra if sid not in seen)
    return ids, sweep


@dataclass(frozen=True)
class Refresh:
    """What a refresh read: the first page in the list's order (``top``; none for a
    search), the most recently active page (``recent``), the ids checked (``asked``) and
    the rows of those still there (``checked``)."""

    top: list[SessionInfo]
    recent: list[SessionInfo]
    asked: list[str]
    checked: list[SessionInfo]


async def read_refresh(
    store: Store,
    *,
    page_size: int,
    search: bool,
    order: SessionOrder,
    descending: bool,
    check: list[str],
) -> Refresh:
    """Read what a refresh of a session list needs (a page or two, and ``check`` by id)."""
    top: list[SessionInfo] = []
    if not search:
        page = await store.reader.list_sessions(limit=page_size, order=order, descending=descending)
        top = page.sessions
    if not search and order == "activity" and descending:
        recent = top
    else:
        recent = (await store.reader.list_sessions(limit=page_size)).sessions
    # Last, so that a session deleted meanwhile counts as gone.
    checked: list[SessionInfo] = []
    for start in range(0, len(check), ID_BATCH):
        checked.extend(await store.reader.sessions_by_ids(check[start : start + ID_BATCH]))
    return Refresh(top, recent, check, checked)


@dataclass
class MergePlan:
    """How a refresh changes the rows shown, in the order to apply it.

    1. ``updated``: ``(row, new row)`` changed in place (rows as they were numbered);
    2. ``gone``: the ids to remove (sessions that vanished, and rows that now sort past
       the last loaded row while more are to page: paging brings them back);
    3. ``target``: the rows in the wanted order once those are removed, where the ids in
       ``placing`` are to be moved (if shown) or inserted (if new).
    """

    updated: list[tuple[int, SessionInfo]] = field(default_factory=list)
    gone: set[str] = field(default_factory=set)
    target: list[SessionInfo] = field(default_factory=list)
    placing: set[str] = field(default_factory=set)


def plan_merge(
    rows: Sequence[SessionInfo],
    refresh: Refresh,
    *,
    key_of: SortKey,
    descending: bool,
    search: bool,
    known: set[str],
    more: bool,
) -> MergePlan:
    """Apply a refresh's answers to ``rows`` (in display order, sorted by ``key_of``):
    update, remove, move, insert. In a search (``search``) new sessions are not added;
    ``known`` are the ids shown; ``more``: rows after the last one are still to page."""
    fresh: dict[str, SessionInfo] = {info.id: info for info in refresh.recent}
    fresh.update((info.id, info) for info in refresh.top)
    fresh.update((info.id, info) for info in refresh.checked)
    answered = {info.id for info in refresh.checked}
    vanished = {sid for sid in refresh.asked if sid not in answered}
    plan = MergePlan()
    rows = list(rows)

    # 1. Rows whose data changed: updated in place; those whose key changed must move.
    moved: set[str] = set()
    for row, info in enumerate(rows):
        new = fresh.get(info.id)
        if new is None or info.id in vanished or not differs(info, new):
            continue
        rows[row] = new
        plan.updated.append((row, new))
        if key_of(new) != key_of(info):
            moved.add(info.id)

    # 2. The order wanted: the rows that stay put, with the moved and the new ones
    # placed among them by their keys. Past the last loaded row (more to page), a moved
    # row leaves and a new one is not added: paging brings them where they belong.
    target = [info for info in rows if info.id not in moved and info.id not in vanished]
    keys = [key_of(info) for info in target]
    incoming = [info for info in rows if info.id in moved]
    if not search:
        seen: set[str] = set()
        for info in (*refresh.top, *refresh.recent):
            if info.id not in known and info.id not in seen:
                seen.add(info.id)
                incoming.append(fresh[info.id])
    dropped: set[str] = set()
    for info in sorted(incoming, key=key_of, reverse=descending):
        key = key_of(info)
        at = place(keys, key, descending)
        if more and at == len(target):
            if info.id in moved:
                dropped.add(info.id)
            continue
        target.insert(at, info)
        keys.insert(at, key)
        plan.placing.add(info.id)
    plan.gone = vanished | dropped
    plan.target = target
    return plan
