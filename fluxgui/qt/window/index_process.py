"""The search index built by a child process (:mod:`fluxgui.services.index.child`): a
QProcess whose JSON lines become signals. The window's UI thread does none of the work.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QObject, QProcess, Signal

from fluxgui.core.ports import OpenOptions
from fluxgui.services.index import UpdateReport
from fluxgui.services.index.child import command, request_line


class IndexProcess(QObject):
    """One build. ``progress(done, total)``; then ``done(report)`` or ``failed(reason)``
    (also when the child names another store than ``store_key``)."""

    progress = Signal(int, object)
    done = Signal(object)
    failed = Signal(str)

    def __init__(self, parent: QObject, target: str, options: OpenOptions, store_key: str) -> None:
        super().__init__(parent)
        self._store_key = store_key
        self._error: str | None = None
        self._report: UpdateReport | None = None
        self._ended = False
        self._buffer = b""
        self.process = QProcess(self)
        self.process.setProcessChannelMode(QProcess.ProcessChannelMode.SeparateChannels)
        self.process.readyReadStandardOutput.connect(self._read)
        self.process.finished.connect(self._finished)
        self.process.errorOccurred.connect(self._error_occurred)
        program, *args = command()
        self.process.start(program, args)
        # The request (a password in a URL, too) goes through the pipe, never argv.
        self.process.write(request_line(target, options))

    @property
    def running(self) -> bool:
        return not self._ended

    def stop(self) -> None:
        """Kill the build (the index stays consistent; the next one continues it)."""
        if self._ended:
            return
        self._ended = True
        self.process.kill()
        self.process.waitForFinished(2000)

    def _read(self) -> None:
        self._buffer += bytes(self.process.readAllStandardOutput().data())
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            self._line(line)

    def _line(self, line: bytes) -> None:
        try:
            value: Any = json.loads(line)
        except ValueError:
            return
        if not isinstance(value, dict):
            return
        if "store_key" in value and value["store_key"] != self._store_key:
            self._error = "the index process opened another store"
            self.stop()
            self.failed.emit(self._error)
        elif "progress" in value:
            done, total = value["progress"]
            self.progress.emit(int(done), None if total is None else int(total))
        elif "done" in value:
            self._report = UpdateReport(**value["done"])
        elif "error" in value:
            self._error = str(value["error"])

    def _finished(self, code: int, status: QProcess.ExitStatus) -> None:
        if self._ended:
            return
        self._ended = True
        self._read()
        if self._report is not None and code == 0:
            self.done.emit(self._report)
        else:
            self.failed.emit(self._error or f"the index process ended with status {code}")

    def _error_occurred(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart and not self._ended:
            self._ended = True
            self.failed.emit("the index process could not start")
