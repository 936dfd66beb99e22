"""The index over texts longer than ``stored.PIECE`` characters (issue 34: a 50 MB item
made ``fluxgui index`` peak at 830 MB): such a text is stored as its bytes, written a
piece at a time, and given to the FTS table in overlapping slices — and the index still
finds exactly what a scan finds, needles across the slices' edges, around a NUL, a lone
surrogate and a capital sigma (whose fold depends on its neighbours) included; updates
take such rows out again."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import write_agents, write_flux
from json_helpers import hello_entry, hello_save

from fluxgui.adapters import open_store
from fluxgui.core.hits import fold
from fluxgui.services.index import full_scan, index_path, scan, search, stored, update_index
from fluxgui.services.index.stored import PIECE, fts_parts, fts_text


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLUXGUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLUXGUI_DATA_DIR", str(tmp_path / "data"))


def _filler(n: int, alphabet: str = "abc def ") -> str:
    return (alphabet * (n // len(alphabet) + 1))[:n]


def _put(text: str, at: int, word: str) -> str:
    return text[:at] + word + text[at + len(word) :]


def long_texts(surrogate: bool) -> list[str]:
    """Texts of two slices and more: ASCII (needles across the first edge, at both ends),
    non-ASCII (a NUL, a word across the second edge), one with a capital sigma whose fold
    is final only when read up to the slice's edge (and, with ``surrogate``, a lone one)."""
    n = 2 * PIECE + 1000
    ascii_text = _put(_put(_put(_filler(n), 0, "headword "), PIECE - 4, "boundary"), n - 8, "tailword")
    other = _put(_filler(n, "ééa b "), PIECE // 2, "nul \x00 byte")
    other = _put(other, 2 * PIECE - 3, "zürich")
    # "ΟΔΟΣ" ends the first slice (it reaches PIECE + 2): folded alone its Σ is final
    # (ς); folded whole it is not ("'''a" follows: apostrophes are case-ignorable).
    sigma = _put(_filler(n), PIECE - 2, "ΟΔΟΣ'''a")
    texts = [ascii_text, other, sigma]
    if surrogate:
        texts.append(_put(_filler(n), PIECE + 5, "x\udc80y"))
    return texts


NEEDLES = [
    "headword", "boundary", "BOUNDARY", "tailword", "nul \x00 byte", "l \x00 b", "\x00 by",
    "zürich", "ZÜRICH", "δοσ", "ΟΔΟΣ'''A", "οδος", "x\udc80y", "abc def", "nothing-here",
]


@pytest.fixture(params=["flux", "agents", "json"])
def written(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, Path, list[str]]:
    """A store written by its library: session ``big`` (short messages around the long
    texts) and session ``small``."""
    kind = request.param
    target = tmp_path / ("store.db" if kind != "json" else "folder")
    texts = long_texts(surrogate=kind == "agents")  # (only JSON can carry a lone surrogate)
    items: list[dict[str, Any]] = [{"role": "user", "content": "before boundary"}]
    items += [{"role": "assistant", "content": t} for t in texts]
    items.append({"role": "user", "content": "after tailword"})
    data = {"big": items, "small": [{"role": "user", "content": "headword alone"}]}
    if kind == "flux":
        write_flux(target, data)
    elif kind == "agents":
        write_agents(target, data)
    else:
        for sid, its in data.items():
            hello_save(target, sid, [hello_entry(m["role"], m["content"]) for m in its])
    return kind, target, texts


async def assert_same(store: Any) -> None:
    for needle in NEEDLES:
        indexed = await search(store, needle, use="index", update=False)
        every = await full_scan(store, needle)
        assert indexed.path == "index"
        assert indexed.hits == every.hits, needle
        assert (await scan(store, needle)).hits == every.hits, needle


def _long_rows(store: Any) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(index_path(store.store_key))
    try:
        return db.execute(
            "SELECT typeof(text), length(text) FROM msg WHERE length(CAST(text AS BLOB)) > ?", (PIECE,)
        ).fetchall()
    finally:
        db.close()


async def test_long_texts_are_indexed_in_pieces_and_found_as_a_scan_finds(
    written: tuple[str, Path, list[str]],
) -> None:
    kind, target, texts = written
    store = await open_store(str(target))
    try:
        report = await update_index(store)
        assert report.added == len(texts) + 3
        # each long text went in as its bytes, written a piece at a time
        assert sorted(_long_rows(store)) == sorted(
            ("blob", len(t.encode("utf-8", "surrogatepass"))) for t in texts)
        await assert_same(store)
        assert {h.session_id for h in (await search(store, "boundary", update=False)).hits} == {"big"}
        assert (await search(store, "δοσ", update=False)).hits
        assert not (await search(store, "οδος", update=False)).hits  # (its Σ is not final)
        if kind == "json":
            hello_save(target, "big", [hello_entry("user", "all new")])
        elif kind == "flux":
            await FluxSQLiteSession(str(target), session_id="big").clear()
            await FluxSQLiteSession(str(target), session_id="big").add_messages(
                [{"role": "user", "content": "all new"}])
        else:
            s = AgentsSQLiteSession("big", str(target))
            try:
                await s.clear_session()
                await s.add_items([{"role": "user", "content": "all new"}])  # type: ignore[list-item]
            finally:
                s.close()
        await update_index(store)
        # the long rows (and every slice of them) are out of the index again
        assert _long_rows(store) == []
        await assert_same(store)
        assert not (await search(store, "boundary", update=False)).hits
        assert [h.session_id for h in (await search(store, "headword", update=False)).hits] == ["small"]
    finally:
        await store.close()


def _trigrams(text: str) -> set[str]:
    return {text[i : i + 3] for i in range(len(text) - 2)}


def test_the_slices_hold_every_trigram_of_the_whole_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the text (a fold to two characters, a capital sigma, NUL, a lone
    surrogate), each trigram of what the FTS table is given of it whole lies in a slice."""
    monkeypatch.setattr(stored, "PIECE", 7)
    rng = random.Random(34)
    alphabet = "aAbΣσς İi\u0307'\x00\udc80ßé😀"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        parts = list(fts_parts(text))
        assert len(parts) == 1 or len(text) > 7
        whole = _trigrams(fts_text(text))
        assert whole <= set().union(*(_trigrams(p) for p in parts)), text
        assert all("\x00" not in p for p in parts)


def test_a_long_text_is_folded_whole_only_when_a_capital_sigma_needs_it() -> None:
    text = _filler(3 * PIECE)
    assert [len(p) for p in fts_parts(text)] == [PIECE + 2, PIECE + 2, PIECE]
    assert fold("ΟΔΟΣ'''A") == "οδοσ'''a" and fold("ΟΔΟΣ''") == "οδος''"
