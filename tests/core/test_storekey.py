"""Store keys name a store the same way on every machine, and never hold a secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxgui.core import storekey


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("postgresql+asyncpg://ann:pw@DB.example.com/support", "postgresql://db.example.com:5432/support"),
        ("postgres://bob@db.example.com:5432/support", "postgresql://db.example.com:5432/support"),
        ("postgresql://127.0.0.1:6543/x", "postgresql://localhost:6543/x"),
        ("redis://:secret@cache:6380/2", "redis://cache:6380/2"),
    ],
)
def test_server_locations_drop_logins_and_fill_defaults(url: str, key: str) -> None:
    assert storekey.url_location(url) == key


def test_parts_are_sorted_and_empty_ones_left_out() -> None:
    key = storekey.compose("sqlite:/a.db", {"sessions": "s", "format": "agents", "messages": None})
    assert key == "sqlite:/a.db?format=agents&sessions=s"


def test_paths_are_absolute_and_resolved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "real.db"
    real.write_bytes(b"")
    (tmp_path / "link.db").symlink_to(real)
    monkeypatch.chdir(tmp_path)
    assert storekey.path_location("sqlite", Path("link.db")) == f"sqlite:{real.resolve()}"


def test_a_label_replaces_the_key() -> None:
    assert storekey.choose("sqlite:/a.db?format=flux", "  team   archive ") == "label:team archive"
    assert storekey.choose("sqlite:/a.db?format=flux", None) == "sqlite:/a.db?format=flux"
    with pytest.raises(ValueError):
        storekey.label_key("   ")
