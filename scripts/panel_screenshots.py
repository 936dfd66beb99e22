"""Render the main window with every side panel open, at a given size, scale and palette,
one PNG per side panel tab (issue 37: panels that fit any screen).

    QT_QPA_PLATFORM=offscreen [QT_SCALE_FACTOR=2] .venv/bin/python scripts/panel_screenshots.py \
        OUT_PREFIX [--size 900x560] [--dark] [TARGET]

Settings and the review database go to a temporary folder. Prints the window's minimum
size and the widths of the session list and the conversation.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile


def dark_palette() -> object:
    from PySide6.QtGui import QColor, QPalette

    p = QPalette()
    for role, colour in [
        (QPalette.ColorRole.Window, "#202124"), (QPalette.ColorRole.WindowText, "#e8eaed"),
        (QPalette.ColorRole.Base, "#171717"), (QPalette.ColorRole.AlternateBase, "#2a2b2e"),
        (QPalette.ColorRole.Text, "#e8eaed"), (QPalette.ColorRole.Button, "#303134"),
        (QPalette.ColorRole.ButtonText, "#e8eaed"), (QPalette.ColorRole.Highlight, "#8ab4f8"),
        (QPalette.ColorRole.HighlightedText, "#202124"), (QPalette.ColorRole.PlaceholderText, "#9aa0a6"),
        (QPalette.ColorRole.ToolTipBase, "#303134"), (QPalette.ColorRole.ToolTipText, "#e8eaed"),
    ]:
        p.setColor(role, QColor(colour))
    return p


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--size", default="900x560")
    parser.add_argument("--dark", action="store_true")
    parser.add_argument("target", nargs="?", default="demo")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    tmp = tempfile.mkdtemp()
    os.environ.update(XDG_CONFIG_HOME=tmp, FLUXGUI_DATA_DIR=tmp + "/data", FLUXGUI_CACHE_DIR=tmp + "/cache")

    import qasync
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, tmp)
    app = QApplication(sys.argv)
    if args.dark:
        app.setStyle("Fusion")
        app.setPalette(dark_palette())
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    from fluxgui.qt.window import MainWindow
    from fluxgui.core.demo import demo_store_path

    async def turns(n: int = 20) -> None:
        for _ in range(n):
            await asyncio.sleep(0.02)

    async def run() -> int:
        window = MainWindow()
        window.resize(width, height)
        window.show()
        settled = asyncio.get_running_loop().create_future()
        window.messagesShown.connect(lambda _sid: settled.done() or settled.set_result(None))
        target = str(demo_store_path()) if args.target == "demo" else args.target
        window.stores.open_target(target)
        await asyncio.wait_for(settled, 60)
        window.actions_by_name["review_panel"].trigger()
        window.actions_by_name["doctor"].trigger()
        window.actions_by_name["chat"].trigger()
        window.resize(width, height)
        await turns(40)
        if window.conversation.model.rowCount():
            window.conversation.select_message(window.conversation.model.message(0).id)
        hint = window.minimumSizeHint()
        for dock, name in ((window.reviews.dock, "review"), (window.doctor.dock, "doctor"), (window.chat_dock, "chat")):
            dock.raise_()
            await turns(15)
            path = f"{args.out}-{name}.png"
            window.grab().save(path)
            print(f"{path}: window {window.width()}x{window.height()} (minimum {hint.width()}x{hint.height()}),"
                  f" list {window.session_view.width()}, conversation {window.conversation.width()}"
                  f" (messages {window.conversation.view.width()}), side panel {dock.width()}")
        await window.aclose()
        return 0

    return loop.run_until_complete(run())


if __name__ == "__main__":
    sys.exit(main())
