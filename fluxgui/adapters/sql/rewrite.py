"""Several deletions and insertions in one session as one reversible change.

A repair (the session doctor's) drops some rows and puts new ones right after others,
all in one transaction and undone as one edit. Stores order a session by id (or by
``(created_at, id)``), so a row put in the middle moves every row after it to a new id
(same values, same time), as :meth:`~.editor.TableEditor.insert_row` does for one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fluxgui.core.changes import Change, Row
from fluxgui.core.errors import SessionNotFound, show_id

from .backend import Tx
from .editor import replace_id

if TYPE_CHECKING:
    from .editor import TableEditor

#: a row to put in: the id of the row it goes right after, and its stored values
Insertion = tuple[int, Row]


async def rewrite(
    editor: TableEditor, sid: str, delete: Sequence[int], insert: Sequence[Insertion], label: str
) -> Change:
    """Drop the rows ``delete`` and put each of ``insert`` right after its row (several
    after one row keep their order), as one transaction; returns the ``Change``."""

    async def build(tx: Tx) -> Change:
        drop = list(dict.fromkeys(int(i) for i in delete))
        anchors = list(dict.fromkeys(int(a) for a, _values in insert))
        found = await editor.rows_by_id(tx, sid, [*drop, *anchors])
        missing = [i for i in (*drop, *anchors) if i not in found]
        if missing:
            raise SessionNotFound(f"message {missing[0]} is not in session {show_id(sid)} (reload)")
        before = await editor.session_row(tx, sid)
        dropped = set(drop)
        removed = {i: found[i] for i in drop}
        added: list[Row] = []
        if insert:
            order = editor.order
            first = min((found[a] for a in anchors), key=lambda r: tuple(r[c] for c in order))
            tail = await editor.rows_after(tx, sid, first, inclusive=False)
            after: dict[int, list[Row]] = {}
            for anchor, values in insert:
                row = {**editor.sealed(sid, values), "created_at": found[int(anchor)]["created_at"]}
                after.setdefault(int(anchor), []).append(row)
            # The new run of rows: what goes after the first anchor, then each later row
            # (unless dropped) followed by what goes after it. Every later row moves.
            run: list[Row] = list(after.get(int(first["id"]), []))
            for row in tail:
                removed[int(row["id"])] = row
                if int(row["id"]) not in dropped:
                    run.append(row)
                run.extend(after.get(int(row["id"]), []))
            ids = await editor.new_ids(tx, len(run))
            added = [replace_id(row, new_id) for row, new_id in zip(run, ids, strict=True)]
        rows = sorted(removed.values(), key=lambda r: tuple(r[c] for c in editor.order))
        return Change(
            sid, label, tuple(rows), tuple(added), before, await editor.touched(tx, sid, before)
        )

    return await editor.run(build)


__all__ = ["Insertion", "rewrite"]
