"""A limited search without an index on SQLite reads no further than its hits: the
database walks the key from the newest row and is asked for the hits wanted and one more
at a time (issue 34: batches of 500 made it read on through the whole table for a text
with fewer matches, the NUL test costing 70 % on every row read). Shown on a store whose
old rows' page is damaged on disk: a search that stops before it answers; one that reads
that far says the file is damaged."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from helpers import write_agents, write_flux

from fluxgui.adapters import open_store
from fluxgui.core.errors import FluxguiError
from fluxgui.services.index import scan

FILLER = [f"ordinary message number {i} about the weather" for i in range(3000)]


def _damage_an_old_page(path: Path, table: str) -> None:
    """Overwrite the type byte of the table's second leaf page (old rows; not the first
    row, which opening an Agents SDK store reads)."""
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        (page,) = db.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path LIMIT 1 OFFSET 1",
            (table,),
        ).fetchone()
    finally:
        db.close()
    with path.open("r+b") as fh:
        fh.seek((page - 1) * page_size)
        fh.write(b"\xff")


NEWEST = [f"the needle, told {i} times" for i in range(10)]


@pytest.fixture(params=["flux", "agents"])
def damaged(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A store written by the library (3,000 old rows, then 10 holding the needle) with a
    page of old rows damaged on disk."""
    path = tmp_path / "store.db"
    write = write_flux if request.param == "flux" else write_agents
    write(path, {"old": [{"role": "user", "content": t} for t in FILLER]})
    write(path, {"new": [{"role": "user", "content": t} for t in NEWEST]})
    _damage_an_old_page(path, "messages" if request.param == "flux" else "agent_messages")
    return path


async def test_a_limited_search_reads_no_further_than_its_hits(damaged: Path) -> None:
    store = await open_store(str(damaged))
    try:
        found = await scan(store, "needle", limit=5)
        assert [h.snippet for h in found.hits] == list(reversed(NEWEST))[:5]
        assert found.truncated
        with pytest.raises(FluxguiError, match="malformed|damaged|corrupt"):
            await scan(store, "needle")  # every row: it meets the damaged page
    finally:
        await store.close()
