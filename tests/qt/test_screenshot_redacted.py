"""``fluxgui TARGET --screenshot FILE.png --redact KINDS`` renders the conversation
redacted (issue 39): what the window holds when it is grabbed — the conversation as
rendered, the inspector, every label and item view — has placeholders where the planted
secrets and personal data were, and never the values; a ``--redact`` that cannot be
applied (an unknown kind, custom without rules) is a one-line error and no file.

The window is grabbed in a child process (``--screenshot`` runs its own loop); the grab
is wrapped there to record the texts of every widget of the window at that moment."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, cli_env, run_cli
from qt_helpers import write_agents_store
from redaction_corpus import PII, SECRETS

SID = "planted-1"
KEY = next(v for k, v, _s in SECRETS if k == "OPENAI_KEY")
EMAIL = next(v for k, v, _s in PII if k == "EMAIL")
PHONE = next(v for k, v, _s in PII if k == "PHONE")

SCRIPT = r'''
import json, sys
from fluxgui.qt.window import MainWindow
from PySide6.QtCore import QAbstractListModel, QAbstractTableModel, QModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QLabel, QLineEdit, QPlainTextEdit, QTextEdit

def texts(window):
    """Every text the window shows: the conversation as rendered, labels, editors,
    and each item view's cells (the inspector's tree, the session list)."""
    out = [window.conversation.toPlainText(), window.windowTitle()]
    for w in window.findChildren(QLabel):
        out.append(w.text())
    for w in window.findChildren(QLineEdit):
        out.append(w.text())
    for w in window.findChildren(QPlainTextEdit) + window.findChildren(QTextEdit):
        out.append(w.toPlainText())
    for view in window.findChildren(QAbstractItemView):
        model = view.model()
        if model is None:
            continue
        flat = isinstance(model, (QAbstractListModel, QAbstractTableModel))
        todo = [(QModelIndex(), 0)]
        while todo:
            parent, depth = todo.pop()
            columns = 1 if isinstance(model, QAbstractListModel) else model.columnCount(parent)
            for r in range(min(model.rowCount(parent), 500)):
                for c in range(columns):
                    index = model.index(r, c, parent)
                    out.append(str(index.data(Qt.ItemDataRole.DisplayRole) or ""))
                    out.append(str(index.data(Qt.ItemDataRole.ToolTipRole) or ""))
                    if not flat and c == 0 and depth < 6 and model.rowCount(index) > 0:
                        todo.append((index, depth + 1))
    return out

grab = MainWindow.grab
def recording_grab(self, *args):
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump({"texts": texts(self), "redact_on": self.actions_by_name["redact"].isChecked()}, f)
    return grab(self, *args)
MainWindow.grab = recording_grab

from fluxgui.cli.dispatch import main
sys.exit(main(sys.argv[2:]))
'''


@pytest.fixture
def planted_db(tmp_path: Path) -> Path:
    items = [
        {"role": "user", "content": f"my key is {KEY}, mail me at {EMAIL} or call {PHONE}"},
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": json.dumps({"email": EMAIL})},
        {"type": "function_call_output", "call_id": "c1", "output": json.dumps({"found": EMAIL, "key": KEY})},
        {"type": "message", "role": "assistant", "status": "completed", "id": "m1",
         "content": [{"type": "output_text", "text": f"Done: {EMAIL}", "annotations": []}]},
    ]
    return write_agents_store(tmp_path / "planted.db", {SID: [items]})


def _shoot(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    script = tmp_path / "shoot.py"
    script.write_text(SCRIPT, encoding="utf-8")
    record = tmp_path / "texts.json"
    proc = subprocess.run(
        [sys.executable, str(script), str(record), *args],
        capture_output=True, text=True, env=cli_env(), timeout=120, cwd=str(REPO),
    )
    shown = json.loads(record.read_text(encoding="utf-8")) if record.exists() else {}
    return proc, shown


def test_a_screenshot_with_redact_renders_placeholders_not_the_values(tmp_path, planted_db):
    out = tmp_path / "shot.png"
    proc, shown = _shoot(tmp_path, str(planted_db), "--session", SID, "--screenshot", str(out), "--redact", "all")
    assert proc.returncode == 0, proc.stderr
    assert out.is_file() and out.stat().st_size > 0
    assert shown["redact_on"]
    whole = "\n".join(shown["texts"])
    assert "[OPENAI_KEY_1]" in whole and "[EMAIL_1]" in whole and "[PHONE_1]" in whole
    for value in (KEY, EMAIL, PHONE, "jane.doe"):
        assert value not in whole, value
    # the same store without --redact shows the values (the check above can fail)
    plain, shown = _shoot(tmp_path, str(planted_db), "--session", SID, "--screenshot", str(tmp_path / "p.png"))
    assert plain.returncode == 0, plain.stderr
    assert not shown["redact_on"]
    assert KEY in "\n".join(shown["texts"]) and EMAIL in "\n".join(shown["texts"])


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--redact", "names"], "--redact: unknown kind 'names'"),
        (["--redact", "custom"], "--redact custom: no rules to apply"),
        (["--redact-rules", "{tmp}/rules.json"], "--redact-rules needs --redact custom"),
        (["--redact", "pii", "--phone-region", "XX"], "--phone-region: unknown region 'XX'"),
    ],
    ids=["unknown-kind", "custom-without-rules", "rules-without-redact", "bad-region"],
)
def test_a_redact_that_cannot_apply_is_one_line_and_no_file(tmp_path, planted_db, monkeypatch, args, needle):
    (tmp_path / "rules.json").write_text(json.dumps({"terms": ["Acme"]}))
    monkeypatch.setenv("FLUXGUI_DATA_DIR", str(tmp_path / "data"))  # (no rules file of the settings)
    out = tmp_path / "shot.png"
    proc = run_cli(str(planted_db), "--screenshot", str(out), *[a.format(tmp=tmp_path) for a in args])
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fluxgui: error: ") and needle in lines[0], proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("session", [[], ["--session", "alice@example.com"]], ids=["first-row", "keyed-session"])
def test_a_screenshot_with_redact_shows_no_raw_session_id(tmp_path, session):
    """A store keyed by user: the session list, the conversation's title, every label and
    tooltip the grab holds show the ids redacted (the same placeholder as in the text)."""
    alice, phone = "alice@example.com", "user-+14155550123"
    db = write_agents_store(tmp_path / "keyed.db", {
        alice: [[{"role": "user", "content": f"write to {alice}"}]],
        phone: [[{"role": "user", "content": "call me"}]],
        "conv-clean": [[{"role": "user", "content": "hi"}]],
    })
    out = tmp_path / "keyed.png"
    proc, shown = _shoot(tmp_path, str(db), *session, "--redact", "all", "--screenshot", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.is_file() and shown["redact_on"]
    whole = "\n".join(shown["texts"])
    assert alice not in whole and "14155550123" not in whole
    assert "[EMAIL_1]" in whole and "user-[PHONE_1]" in whole and "conv-clean" in whole
    if session:  # the conversation shown is alice's: its title and its text, one placeholder
        assert shown["texts"][0].count("[EMAIL_1]") >= 1 and "write to [EMAIL_1]" in shown["texts"][0]
