"""Every stored part shown as it is (issue 37): an image or file input part as a marker
naming it, an MCP call with its server, arguments and output, malformed rows literally
(``null``, ``"just a string"`` with its quotes), U+2028/U+2029 marked like other hidden
characters, and an orphan output's true label in a fully loaded session — cards of a
store written by the Agents SDK."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from qt_helpers import OFFSCREEN_NOISE, run_on, write_agents_store

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

ITEMS: list[Any] = [
    {"role": "user", "content": [
        {"type": "input_text", "text": "what is on this picture?"},
        {"type": "input_image", "image_url": "https://example.com/cat.png", "detail": "high"},
        {"type": "input_file", "filename": "invoice.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"},
    ]},
    {"type": "mcp_call", "id": "mcp_1", "server_label": "deepwiki", "name": "ask_question",
     "arguments": '{"q": "refunds"}', "output": "Refunds take 5 days."},
    None,
    "just a string",
    {"role": "user", "content": "first line\u2028second\u2029third"},
    {"type": "function_call_output", "call_id": "call_gone", "output": "42"},
]


@pytest.fixture
def shown(qtbot: Any, qloop: Any, pane: Any, tmp_path: Path) -> Any:
    from fluxgui.adapters import open_store

    path = write_agents_store(tmp_path / "parts.db", {"parts": [ITEMS]})
    store = run_on(qtbot, qloop, open_store(str(path)))
    with qtbot.waitSignal(pane.loaded, timeout=20_000):
        pane.show_session(store, "parts")
    qtbot.waitUntil(lambda: not pane.busy, timeout=20_000)
    pane.view.viewport().grab()
    yield pane
    run_on(qtbot, qloop, store.close())


def _card(pane: Any, row: int) -> str:
    m = pane.model.message(row)
    return pane.delegate.document(m).toPlainText()


def test_image_and_file_parts_are_named_not_dropped(shown):
    text = _card(shown, 0)
    assert "what is on this picture?" in text
    assert "[input_image: https://example.com/cat.png · detail high]" in text
    assert "[input_file: invoice.pdf · 36 characters of inline data]" in text
    assert "JVBERi0x" not in text  # never decoded nor shown


def test_an_mcp_call_shows_its_server_arguments_and_output(shown):
    m = shown.model.message(1)
    text = _card(shown, 1)
    assert "refunds" in text and "Refunds take 5 days." in text
    assert "deepwiki" in shown.delegate.header_text(m) or "deepwiki" in text


def test_malformed_rows_show_literally(shown):
    assert _card(shown, 2).strip() == "null"
    assert _card(shown, 3).strip() == '"just a string"'


def test_line_and_paragraph_separators_are_marked(shown):
    text = _card(shown, 4)
    assert "first line⟨U+2028⟩second⟨U+2029⟩third" in text
    assert "hidden" in {p.name for p in shown.delegate.header_parts(
        shown.delegate.layout_rows(shown.view.visualRect(shown.model.index(4, 0)), shown.model.message(4)).header,
        shown.model.message(4))}


def test_an_orphan_output_in_a_whole_session_says_no_such_call(shown):
    m = shown.model.message(5)
    note = shown.delegate.pair_text(m)
    assert "no call with this call_id in the session" in note and "not loaded" not in note


def _blocks(doc: Any) -> list[Any]:
    out, block = [], doc.begin()
    while block.isValid():
        out.append(block)
        block = block.next()
    return out


def test_assistant_markdown_reads_as_github(qapp):
    from PySide6.QtGui import QFont, QPalette

    from fluxgui.qt.markdown.documents import markdown_document
    from fluxgui.qt.markdown.theme import DocTheme

    theme = DocTheme.from_palette(QPalette(), QFont())
    text = "Run:\n\n```\none\n```\n\n```\ntwo\n```\n\n```\nthree\n```\n\n_it_ and __strong__ but snake_case_name"
    doc = markdown_document(text, theme)
    blocks = {b.text(): b for b in _blocks(doc)}
    # three boxes: the second and third start apart from the one above
    assert blocks["two"].blockFormat().topMargin() > 0 and blocks["three"].blockFormat().topMargin() > 0
    assert blocks["one"].blockFormat().topMargin() == 0
    line = blocks["it and strong but snake_case_name"]
    formats = {}
    it = line.begin()
    while not it.atEnd():
        fragment = it.fragment()
        formats[fragment.text()] = fragment.charFormat()
        it += 1
    assert formats["it"].fontItalic() and not formats["it"].fontUnderline()
    assert formats["strong"].fontWeight() > 500 and not formats["strong"].fontUnderline()
    assert not any(f.fontUnderline() for f in formats.values())


def test_free_text_tool_input_is_not_coloured_as_json():
    from fluxgui.core.bodies import body_plan
    from fluxgui.core.model import from_item

    free = from_item(1, {"type": "function_call", "call_id": "c1", "name": "search", "arguments": "Pantheon"}, None)
    assert body_plan(free, full=True).language == ""
    json_args = from_item(2, {"type": "function_call", "call_id": "c2", "name": "search",
                              "arguments": '{"q": "Pantheon"}'}, None)
    assert body_plan(json_args, full=True).language == "json"
