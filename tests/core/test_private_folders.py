"""Every folder fluxgui makes for its own data is mode 0700, the parents it had to make
too (issue 33.18: ``mkdir(parents=True)`` made them by the umask, 0755)."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest
from helpers import write_flux

from fluxgui.adapters import open_store
from fluxgui.core import paths
from fluxgui.services.index import update_index
from fluxgui.services.reviews import ReviewDB


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture(autouse=True)
def _umask():
    old = os.umask(0o022)  # the usual one: what mkdir's parents would get is 0755
    yield
    os.umask(old)


def test_the_index_makes_its_cache_folder_and_parents_private(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FLUXGUI_CACHE_DIR", str(tmp_path / "home" / "cache" / "fluxgui"))
    (tmp_path / "home").mkdir(mode=0o755)
    db = tmp_path / "store.db"
    write_flux(db, {"s": [{"role": "user", "content": "hello"}]})

    async def build() -> None:
        store = await open_store(str(db))
        try:
            await update_index(store)
        finally:
            await store.close()

    asyncio.run(build())
    made = [tmp_path / "home" / "cache", tmp_path / "home" / "cache" / "fluxgui",
            tmp_path / "home" / "cache" / "fluxgui" / "index"]
    assert [mode(p) for p in made] == [0o700] * 3
    assert mode(tmp_path / "home") == 0o755  # a folder that was there is left alone
    (index,) = made[-1].iterdir()
    assert mode(index) == 0o600


def test_the_review_database_makes_its_data_folder_and_parents_private(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FLUXGUI_DATA_DIR", str(tmp_path / "a" / "b" / "fluxgui"))

    async def open_close() -> None:
        db = await ReviewDB.open(None)
        await db.close()

    asyncio.run(open_close())
    assert [mode(tmp_path / "a"), mode(tmp_path / "a" / "b"), mode(paths.data_dir())] == [0o700] * 3
    assert mode(paths.data_dir() / "reviews.db") == 0o600


def test_a_file_in_the_way_is_an_error_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError):
        paths.private_dir(tmp_path / "file" / "sub")


def test_a_json_session_folder_made_by_an_import_is_private(tmp_path: Path) -> None:
    from helpers import run_cli

    db = tmp_path / "store.db"
    write_flux(db, {"s": [{"role": "user", "content": "hello"}]})
    export = tmp_path / "all.json"
    assert run_cli("export", str(db), "-o", str(export)).returncode == 0
    folder = tmp_path / "sessions"
    done = run_cli("import", "--store-format", "json", str(folder), str(export))
    assert done.returncode == 0, done.stderr
    assert mode(folder) == 0o700
