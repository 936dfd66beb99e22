"""Issue 37: dialogs fit the screen they open on. Every dialog of the window calls the one
helper, :func:`fluxgui.qt.screen_fit.fit_to_screen` (checked in the source), and each,
opened on a small screen — a 640×400 one at 1×, and a 1600×1000 one at 2× (800×500
logical), both offscreen screens of a child process — lies inside the screen's available
geometry, its buttons with it."""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRect
from qt_helpers import OFFSCREEN_NOISE, pytest_in_child

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

QT = Path(__file__).resolve().parents[2] / "fluxgui" / "qt"
#: the Qt classes whose instances are dialogs (a subclass or a direct instance)
DIALOGS = {"QDialog", "QMessageBox", "QProgressDialog", "QFileDialog"}


def _calls_fit(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", "")) == "fit_to_screen"
               for n in ast.walk(node))


def test_every_dialog_calls_the_helper() -> None:
    missing = []
    for path in sorted(QT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(QT.parent.parent)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and {getattr(b, "id", "") for b in node.bases} & DIALOGS:
                init = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
                if init is None or not _calls_fit(init):
                    missing.append(f"{where}: class {node.name}")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                made = [c for c in ast.walk(node) if isinstance(c, ast.Call) and getattr(c.func, "id", "") in DIALOGS]
                if made and not _calls_fit(node):
                    missing.append(f"{where}: {node.name}() makes a {made[0].func.id}")  # type: ignore[attr-defined]
    assert not missing, missing


def _dialogs(window: Any, tmp_path: Path) -> dict[str, Callable[[], Any]]:
    """A way to make each dialog of the window, with the window's store open."""
    from PySide6.QtWidgets import QMessageBox

    from fluxgui.qt.chat.agent_dialog import AgentDialog
    from fluxgui.qt.compare.dialog import CompareDialog
    from fluxgui.qt.conversation.viewer import TextViewer
    from fluxgui.qt.dialogs.confirm import _confirm_box
    from fluxgui.qt.dialogs.encryption_key import KeyDialog
    from fluxgui.qt.dialogs.files import make_file_dialog
    from fluxgui.qt.dialogs.message_edit import MessageEditDialog
    from fluxgui.qt.dialogs.open_url import OpenUrlDialog
    from fluxgui.qt.dialogs.passwords import PasswordDialog
    from fluxgui.qt.dialogs.progress import TransferProgress
    from fluxgui.qt.dialogs.table_chooser import TableChooser
    from fluxgui.qt.dialogs.transfer import CopyDialog, ExportDialog
    from fluxgui.qt.replay.eval_export import EvalExportDialog
    from fluxgui.qt.replay.progress import ReplayProgress
    from fluxgui.qt.replay.settings_dialog import ReplayDialog
    from fluxgui.qt.reviews.queue import cheat_sheet
    from fluxgui.qt.screen_fit import fit_to_screen
    from fluxgui.qt.window.shortcuts import ShortcutsDialog
    from fluxgui.services.chat import AgentConfig

    store = window.stores.store
    sid = window.current_session_id
    long = "a sentence that goes on " * 40
    return {
        "shortcuts": lambda: ShortcutsDialog(window),
        "queue keys": lambda: cheat_sheet(window),
        "agent": lambda: AgentDialog(AgentConfig(), window),
        "compare": lambda: CompareDialog(window.bridge, window),
        "redaction review": lambda: window.redaction.make_review(),
        "replay": lambda: ReplayDialog(sid, 1, AgentConfig(), window),
        "replay progress": lambda: ReplayProgress(sid, 1, 3, window),
        "eval export": lambda: EvalExportDialog(window.bridge, store, shown=sid, selected=[sid], reviews=None,
                                                folder=str(tmp_path), parent=window),
        "password": lambda: PasswordDialog(window, "postgresql://someone:***@" + "db." * 60 + "example"),
        "encryption key": lambda: KeyDialog(window, where="x" * 300),
        "open url": lambda: OpenUrlDialog(window),
        "export": lambda: ExportDialog(window, session_id=sid, selected=[sid], store_sessions=2,
                                       default_dir=str(tmp_path)),
        "copy": lambda: CopyDialog(window, count=2, source_format="flux"),
        "transfer progress": lambda: TransferProgress(window, "Exporting " + long),
        "message edit": lambda: MessageEditDialog(store.traits.columns, lambda _v: None, None, "New", window),
        "table chooser": lambda: TableChooser([(f"sessions_{n}", f"messages_{n}") for n in range(40)], window),
        "text viewer": lambda: TextViewer("A long message", "\n".join([long] * 400), window),
        "confirm": lambda: _confirm_box(window, "Delete", long, long, "Delete"),
        "consolidate": lambda: window.workspace.files.consolidate(),
        "open file": lambda: make_file_dialog(window, str(tmp_path)),
        # as Review's bulk confirmation makes its box (a plain one with this text runs off
        # a 640×400 screen: its OK button at y 403)
        "message box": lambda: fit_to_screen(QMessageBox(QMessageBox.Icon.Warning, "Hm", long, parent=window)),
    }


def test_each_dialog_opens_inside_the_screen(qtbot, window, flux_db, tmp_path):
    from PySide6.QtWidgets import QAbstractButton, QDialogButtonBox

    from fluxgui.qt.screen_fit import available

    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(flux_db), writable=True)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)
    window.resize(window.size().boundedTo(available(window).size()))
    problems = []
    for name, make in _dialogs(window, tmp_path).items():
        dialog = make()
        assert dialog is not None, name
        if not dialog.isVisible():
            dialog.show()
        qtbot.waitUntil(dialog.isVisible)
        area = available(dialog)
        try:
            qtbot.waitUntil(lambda d=dialog, a=area: a.contains(d.frameGeometry()), timeout=2_000)
        except qtbot.TimeoutError:
            problems.append(f"{name}: {dialog.frameGeometry()} outside {area}")
        for box in dialog.findChildren(QDialogButtonBox):
            for button in box.findChildren(QAbstractButton):
                if button.isVisible():
                    at = QRect(button.mapToGlobal(QPoint(0, 0)), button.size())
                    if not area.contains(at):
                        problems.append(f"{name}: button {button.text()!r} at {at} outside {area}")
        dialog.close()
        dialog.deleteLater()
    assert not problems, problems


@pytest.mark.parametrize(("screen", "scale"), [((640, 400), "1"), ((1600, 1000), "2")])
def test_dialogs_fit_a_small_screen(tmp_path, screen, scale) -> None:
    if os.environ.get("FLUXGUI_SMALL_SCREEN"):
        pytest.skip("this is the small-screen run")
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"screens": [{
        "name": "small", "x": 0, "y": 0, "width": screen[0], "height": screen[1],
        "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}), encoding="utf-8")
    env = {"QT_QPA_PLATFORM": f"offscreen:configfile={config}", "QT_SCALE_FACTOR": scale,
           "FLUXGUI_SMALL_SCREEN": "1"}
    pytest_in_child([f"{__file__}::test_each_dialog_opens_inside_the_screen"], env, passed=1)
