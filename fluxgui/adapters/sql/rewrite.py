"""Several deletions and insertions in one session as one reversible change.

A repair (the session doctor's) drops some rows, puts new ones right after others and
moves some right before others, all in one transaction and undone as one edit. Stores
order a session by id, so a row put in the middle moves
every row after it to a new id (same values, same time), as
:meth:`~.editor.TableEditor.insert_row` does for one; a moved row keeps its values, its
time included, and takes a new id in that run like the rows around it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fluxgui.core.changes import Change, Row
from fluxgui.core.errors import FluxguiError, SessionNotFound, show_id

from .backend import Tx
from .editor import replace_id

if TYPE_CHECKING:
    from .editor import TableEditor

#: a row to put in: the id of the row it goes right after, and its stored values
Insertion = tuple[int, Row]


async def rewrite(
    editor: TableEditor, sid: str, delete: Sequence[int], insert: Sequence[Insertion], label: str,
    move: Sequence[tuple[int, int]] = (),
) -> Change:
    """Drop the rows ``delete``, put each of ``insert`` right after its row (several
    after one row keep their order) and each row of ``move`` (its id, the id it goes
    before) right before that row, as one transaction; returns the ``Change``."""

    async def build(tx: Tx) -> Change:
        drop = list(dict.fromkeys(int(i) for i in delete))
        anchors = list(dict.fromkeys(int(a) for a, _values in insert))
        moving = {int(m): int(b) for m, b in move}
        targets = list(dict.fromkeys(moving.values()))
        wanted = list(dict.fromkeys([*drop, *anchors, *moving, *targets]))
        found = await editor.rows_by_id(tx, sid, wanted)
        missing = [i for i in wanted if i not in found]
        if missing:
            raise SessionNotFound(f"message {missing[0]} is not in session {show_id(sid)} (reload)")
        before = await editor.session_row(tx, sid)
        dropped = set(drop)
        removed = {i: found[i] for i in drop}
        added: list[Row] = []
        if insert or moving:
            def key(row: Row) -> int:
                return int(row["id"])

            # Where the new run starts: right after the first anchor, or at the first row
            # something moves before, whichever is earlier.
            starts = [(key(found[a]), 1, found[a]) for a in anchors]
            starts += [(key(found[t]), 0, found[t]) for t in targets]
            _key, after_it, first = min(starts, key=lambda s: (s[0], s[1]))
            tail = await editor.rows_after(tx, sid, first, inclusive=not after_it)
            _check_moves(moving, {int(r["id"]) for r in tail})
            after: dict[int, list[Row]] = {}
            for anchor, values in insert:
                row = {**editor.sealed(sid, values), "created_at": found[int(anchor)]["created_at"]}
                after.setdefault(int(anchor), []).append(row)
            arriving: dict[int, list[Row]] = {}
            for row in tail:
                if int(row["id"]) in moving and int(row["id"]) not in dropped:
                    arriving.setdefault(moving[int(row["id"])], []).append(row)
            # The new run of rows: what goes after the first anchor, then each later row
            # (unless dropped or moved) with what moves before it first and what goes
            # after it last. Every later row moves.
            run: list[Row] = list(after.get(int(first["id"]), [])) if after_it else []
            for row in tail:
                rid = int(row["id"])
                removed[rid] = row
                run.extend(arriving.get(rid, []))
                if rid not in dropped and rid not in moving:
                    run.append(row)
                run.extend(after.get(rid, []))
            ids = await editor.new_ids(tx, len(run))
            added = [replace_id(row, new_id) for row, new_id in zip(run, ids, strict=True)]
        rows = sorted(removed.values(), key=lambda r: int(r["id"]))
        return Change(
            sid, label, tuple(rows), tuple(added), before, await editor.touched(tx, sid, before)
        )

    return await editor.run(build)


def _check_moves(moving: dict[int, int], tail: set[int]) -> None:
    """A row moves back only (it takes a new id after the row it goes before)."""
    for mid in moving:
        if mid not in tail:
            raise FluxguiError(f"message {mid} can only move back, before a message stored before it")


__all__ = ["Insertion", "rewrite"]
