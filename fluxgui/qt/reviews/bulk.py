"""Bulk review with a net (issue 37): Tag All Matching, Set State of All Matching, Claim
All Matching and the same on the selected sessions.

Every session matching is counted first and the count shown for confirmation — with no
filter and no search over the whole store, the button says so ("Change All 41
Sessions"); the run shows a progress dialog whose Cancel stops between two sessions (a
write is never cut half-way); and the whole run is one undoable step
(Review › Undo Bulk Change) that puts back each changed session's state and takes off
the tags it added (claims it made are released).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QProgressDialog

from fluxgui.core.text import plural
from fluxgui.services import pages as store_pages
from fluxgui.services.reviews import UNREVIEWED, Claimed, Edit, Review
from fluxgui.services.reviews import claims
from fluxgui.services.reviews.listing import FilteredPages

from ..screen_fit import fit_to_screen

if TYPE_CHECKING:
    from .host import Reviews


@dataclass
class BulkRecord:
    """What one bulk run changed, to take it back: the reviews before, by session."""

    store_key: str
    edit: Edit | None  # None: a claim
    before: dict[str, Review] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)


def describe(edit: Edit | None) -> str:
    if edit is None:
        return "Claim"
    if edit.state:
        return f"Set the state “{edit.state}” on"
    return f"Tag “{', '.join(edit.add_tags)}” on"


def bulk(c: Reviews, edit: Edit | None, *, everything: bool = False, ids: list[str] | None = None) -> None:
    """``edit`` (``None``: claim) on the selected sessions (``ids``: those), or on every
    session matching the filter and the search (``everything``: counted and confirmed
    first)."""
    if c.db is None or c.key is None or c.host.stores.store is None:
        return
    if not everything:
        chosen = ids if ids is not None else c.host.selected()
        run(c, edit, chosen)
        return
    c.window.statusBar().showMessage("Review: counting the sessions that match…")
    c.host.bridge.start("reviews:bulk:count", all_matching(c),
                          lambda found: confirm(c, edit, found), c.host.show_error)


def whole_store(c: Reviews) -> bool:
    """No review filter and no search: "all matching" is every session of the store."""
    return not c.filter.active and not c.host.sessions.search_text


def confirm(c: Reviews, edit: Edit | None, found: list[str]) -> None:
    """Ask before changing ``found`` (non-modal for the loop: the answer runs it)."""
    c.window.statusBar().clearMessage()
    box = fit_to_screen(QMessageBox(c.window))
    box.setObjectName("bulkConfirm")
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle("Change matching sessions")
    n = len(found)
    if not n:
        box.setText("No session matches the filter: nothing to change.")
        box.setStandardButtons(QMessageBox.StandardButton.Ok)
        box.open()
        c.bulk_box = box
        return
    what = describe(edit)
    if whole_store(c):
        box.setIcon(QMessageBox.Icon.Warning)
        box.setText(f"No filter and no search: this changes every session of the store.\n\n"
                    f"{what} all {plural(n, 'session')}?")
        label = f"Change All {n:,} Sessions"
    else:
        box.setText(f"{what} {plural(n, 'session')} matching the filter?")
        label = f"Change {plural(n, 'Session')}"
    go = box.addButton(label, QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.setInformativeText("Review › Undo Bulk Change takes it back.")
    def clicked(button: object) -> None:
        if button is go:
            run(c, edit, found)

    box.buttonClicked.connect(clicked)
    c.bulk_box = box
    box.open()


def run(c: Reviews, edit: Edit | None, ids: list[str]) -> None:
    """Change ``ids`` with a progress dialog and Cancel; one undoable record."""
    if c.db is None or c.key is None or not ids:
        if not ids:
            c.bulkDone.emit(0)
        return
    progress = QProgressDialog(f"{describe(edit)} {plural(len(ids), 'session')}…", "Cancel",
                               0, len(ids), c.window)
    progress.setObjectName("bulkProgress")
    fit_to_screen(progress)
    progress.setWindowTitle("Review")
    progress.setWindowModality(Qt.WindowModality.WindowModal)
    progress.setMinimumDuration(300)
    progress.setAutoClose(False)
    progress.setAutoReset(False)
    progress.setValue(0)
    c.bulk_progress = progress
    record = BulkRecord(c.key, edit)
    def failed(error: Exception) -> None:
        progress.close()
        c.host.show_error(error)

    c.host.bridge.start(f"reviews:bulk:{id(record):x}", apply(c, edit, ids, record, progress),
                          lambda n: finished(c, n, len(ids), record, progress), failed)


async def all_matching(c: Reviews) -> list[str]:
    """Every session id matching the search and the review filter, as the list reads them."""
    store, ids, cursor = c.host.stores.store, [], None
    if store is None:
        return []
    filtered = FilteredPages(c.db, c.key, c.filter) if c.filter.active else None  # type: ignore[arg-type]
    text = c.host.sessions.search_text
    if text:
        ids = await store_pages.matching_session_ids(store, text)
        return sorted(await filtered.keep(ids)) if filtered else ids
    while True:
        page = await (filtered.page(store, limit=500, cursor=cursor) if filtered
                      else store_pages.session_page(store, limit=500, cursor=cursor))
        ids += [i.id for i in page.sessions]
        cursor = page.cursor
        if cursor is None or not page.sessions:
            return ids


async def apply(c: Reviews, edit: Edit | None, ids: list[str], record: BulkRecord,
                progress: QProgressDialog) -> int:
    """Change ``ids`` one session at a time (each its own transaction), stopping between
    two when Cancel is pressed; ``record`` collects what changed."""
    db, key = c.db, record.store_key
    assert db is not None
    record.before = await db.reviews(key, ids, notes=False)
    held = 0
    for i, sid in enumerate(ids):
        if progress.wasCanceled():
            break
        progress.setValue(i)
        progress.setLabelText(f"{describe(edit)} {i + 1:,} of {plural(len(ids), 'session')}…")
        if edit is None:
            if await claims.claim(db, key, sid, c.reviewer):
                record.changed.append(sid)
            continue
        try:
            await db.change(key, sid, Edit(state=edit.state, add_tags=list(edit.add_tags)), reviewer=c.reviewer)
        except Claimed:  # another reviewer's: left to them
            held += 1
        else:
            record.changed.append(sid)
    c.held_by_others = held
    return len(record.changed)


def finished(c: Reviews, n: int, total: int, record: BulkRecord, progress: QProgressDialog) -> None:
    cancelled = progress.wasCanceled()
    progress.close()
    if record.changed:
        c.last_bulk = record
    refresh(c)
    held = c.held_by_others
    left = f"; {held} claimed by other reviewers left to them" if held else ""
    stop = f" (cancelled after {n:,} of {total:,})" if cancelled else ""
    c.window.statusBar().showMessage(f"Review: {n} sessions changed{stop}{left}", 8000)
    c.bulkDone.emit(n)


def refresh(c: Reviews) -> None:
    c.marks.clear()
    c._fetch_marks()
    c._on_shown(c.host.shown())
    update_undo(c)


def update_undo(c: Reviews) -> None:
    action = c.host.actions.get("review_undo_bulk")
    if action is not None:
        record = c.last_bulk
        action.setEnabled(record is not None and record.store_key == c.key)


def undo(c: Reviews) -> None:
    """Take the last bulk run back (its store's reviews only)."""
    record = c.last_bulk
    if record is None or c.db is None or record.store_key != c.key:
        return
    c.last_bulk = None
    update_undo(c)
    c.host.bridge.start(f"reviews:unbulk:{id(record):x}", take_back(c, record),
                          lambda n: undone(c, n), c.host.show_error)


async def take_back(c: Reviews, record: BulkRecord) -> int:
    db = c.db
    assert db is not None
    for sid in record.changed:
        before = record.before.get(sid, Review(sid))
        if record.edit is None:
            await db.release(record.store_key, sid, c.reviewer)
            continue
        added = [t for t in record.edit.add_tags if t not in before.tags]
        state = (before.stored_state or UNREVIEWED) if record.edit.state else None
        back = Edit(state=state, remove_tags=added)
        if not back.empty:
            try:
                await db.change(record.store_key, sid, back, reviewer=c.reviewer)
            except Claimed:  # another reviewer took it since: theirs now
                continue
    return len(record.changed)


def undone(c: Reviews, n: int) -> None:
    refresh(c)
    c.window.statusBar().showMessage(f"Review: the bulk change of {plural(n, 'session')} undone", 8000)
    c.bulkUndone.emit(n)


def install(c: Reviews, add: Any) -> None:
    """The Review menu's Undo Bulk Change (``add`` makes a menu action)."""
    action = add("review_undo_bulk", "&Undo Bulk Change", lambda: undo(c))
    action.setEnabled(False)
