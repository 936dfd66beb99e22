"""fluxgui's own folders are where Qt's QStandardPaths puts them, so that the window and
the command line (which computes them without Qt) find the same data."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from fluxgui.core import paths


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("FLUXGUI_DATA_DIR", raising=False)
    monkeypatch.delenv("FLUXGUI_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def test_the_folders_equal_qt_standard_paths(qapp, xdg: Path) -> None:
    from PySide6.QtCore import QStandardPaths

    name = qapp.applicationName()
    qapp.setApplicationName("fluxgui")
    try:
        data = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
        cache = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.CacheLocation)
    finally:
        qapp.setApplicationName(name)
    assert Path(data) == paths.data_dir() == xdg / "data" / "fluxgui"
    assert Path(cache) == paths.cache_dir() == xdg / "cache" / "fluxgui"


def test_overrides_and_private_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLUXGUI_DATA_DIR", str(tmp_path / "mine"))
    assert paths.data_dir() == tmp_path / "mine"
    made = paths.private_file(paths.data_dir() / "reviews.db")
    assert stat.S_IMODE(os.stat(made).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(made.parent).st_mode) == 0o700


def test_the_settings_folder_is_private(tmp_path: Path) -> None:
    """Qt makes the settings' folder (and its missing parents) by the umask, 0755: fluxgui
    makes them first, 0700 (issue 33.18)."""
    from PySide6.QtCore import QSettings

    from fluxgui.qt.settings import RecentStores

    old = os.umask(0o022)
    try:
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "config" / "deep"))
        recent = RecentStores()
        recent.add(str(tmp_path / "store.db"))
        recent.settings.sync()
    finally:
        os.umask(old)
    made = [tmp_path / "config", tmp_path / "config" / "deep", tmp_path / "config" / "deep" / "fluxgui"]
    assert [stat.S_IMODE(os.stat(p).st_mode) for p in made] == [0o700] * 3
    assert (made[-1] / "fluxgui.ini").exists()
