"""Fixtures of the review tests: a review database on SQLite (a file in a temporary data
folder) and on the local PostgreSQL (a fresh database, the suite's ``pg_database``)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def private_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("FLUXGUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FLUXGUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FLUXGUI_REVIEWS", raising=False)
    monkeypatch.setenv("FLUXGUI_REVIEWER", "tester")


@pytest.fixture
def review_pg(pg_database: str) -> str:
    """``postgresql://…/<fresh database>``: a review database of its own, dropped after."""
    return pg_database


@pytest.fixture(params=["sqlite", "postgres"])
def reviews_url(request, tmp_path):
    """A review database URL on each back-end."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'team-reviews.db'}"
    return request.getfixturevalue("review_pg")
