"""Review › Export Results…: the review results of the open store written to CSV or JSON
from the window, exactly as ``fluxgui review export`` writes them
(:func:`fluxgui.services.reviews.results.export_text`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog

from fluxgui.core.text import plural
from fluxgui.services.outputs import check_output
from fluxgui.services.reviews.results import export_text, write_atomic

if TYPE_CHECKING:
    from .host import Reviews

FILTERS = {"csv": "CSV — one row per reviewed session (*.csv)", "json": "JSON — every review whole (*.json)"}


def ask_and_export(c: Reviews) -> None:
    """Ask where (CSV or JSON by the filter chosen), then export."""
    if c.db is None or c.key is None or c.host.stores.store is None:
        c.window.statusBar().showMessage("Open a store with the review panel on first", 5000)
        return
    path, chosen = QFileDialog.getSaveFileName(c.window, "Export review results", "reviews.csv",
                                               ";;".join(FILTERS.values()))
    if not path:
        return
    fmt = "json" if chosen == FILTERS["json"] or path.lower().endswith(".json") else "csv"
    export_to(c, path, fmt)


def export_to(c: Reviews, path: str, fmt: str) -> None:
    """Write the results of the open store's reviews to ``path`` (``fmt``: csv or json);
    never onto the store or a folder it reads."""
    store, db, key = c.host.stores.store, c.db, c.key
    if store is None or db is None or key is None:
        return
    try:
        check_output(Path(path), store.local_paths())
    except Exception as exc:  # noqa: BLE001 - the refusal, shown
        c.host.show_error(exc)
        return

    async def write() -> int:
        text, count = await export_text(db, key, fmt)
        write_atomic(path, text)
        return count

    c.host.bridge.start(
        "reviews:export", write(),
        lambda n: c.window.statusBar().showMessage(f"Wrote {plural(n, 'review')} to {path}", 8000),
        c.host.show_error,
    )
