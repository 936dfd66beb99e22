"""What the cards show is what was stored (issue 16, points 1–4): user text as typed,
assistant Markdown with its line breaks, a plain-text switch, hidden characters as
visible markers with a warning badge, flux tool calls paired with their outputs, and
flux metadata that is not an object kept as it is. Stores written by the real libraries."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip
from qt_helpers import OFFSCREEN_NOISE, run_on, write_agents_store, write_flux_store

from fluxgui.core.model import Message

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

USER_TEXT = (
    "Order math: 2*3*4 = 24, and __init__ runs first.\n"
    "# 1 priority: refund\n"
    "Ada Lovelace\n"
    "12 Analytical Row\n"
    "London  NW1\n"
    "United Kingdom\n"
    "    indented line\twith a tab"
)
ASSISTANT_TEXT = "Ship to:\nAda Lovelace\n12 Analytical Row\n\n**Done**, `2*3`."
HOSTILE = {
    "bidi": "file\u202eexe.txt says evil",
    "zero-width": "pay\u200bpal.com\u2060",
    "controls": "before\x00after \x1b[31mred\x07 bell",
    "surrogate": "half \ud83d of an emoji",
}


@pytest.fixture
def opened(qtbot: Any, qloop: asyncio.AbstractEventLoop) -> Iterator[Any]:
    from fluxgui.adapters import open_store

    stores: list[Any] = []

    def open_(path: Path) -> Any:
        store = run_on(qtbot, qloop, open_store(str(path)))
        stores.append(store)
        return store

    try:
        yield open_
    finally:
        for store in stores:
            run_on(qtbot, qloop, store.close())


def show(qtbot: Any, pane: Any, store: Any, session_id: str) -> list[Message]:
    with qtbot.waitSignal(pane.loaded, timeout=20_000):
        pane.show_session(store, session_id)
    qtbot.waitUntil(lambda: not pane.busy, timeout=20_000)
    return list(pane.model.messages)


def body(pane: Any, m: Message) -> str:
    return pane.delegate.document(m).toPlainText()


# --------------------------------------------------------------------------- point 1


def test_user_text_is_shown_exactly_as_typed_line_by_line(qtbot, pane, opened, tmp_path):
    path = write_agents_store(tmp_path / "a.db", {"s": [[
        {"role": "user", "content": USER_TEXT},
        {"role": "system", "content": "Rules:\n1. *be* kind\n2. __no__ tables"},
    ]]})
    user, system = show(qtbot, pane, opened(path), "s")
    assert body(pane, user).split("\n") == USER_TEXT.split("\n")
    assert body(pane, system).split("\n") == system.text.split("\n")
    doc = pane.delegate.document(user)
    assert doc.blockCount() == len(USER_TEXT.split("\n"))  # no heading, no paragraph merge
    first = doc.begin().begin().fragment().charFormat()
    assert not first.fontItalic() and first.fontWeight() < 600  # 2*3*4 is not emphasis
    pane.view.viewport().grab()  # painting it raises nothing


def test_assistant_markdown_keeps_single_line_breaks_and_has_a_plain_text_switch(
    qtbot, pane, opened, tmp_path
):
    path = write_flux_store(tmp_path / "f.db", {"s": [{"role": "assistant", "content": ASSISTANT_TEXT}]})
    [answer] = show(qtbot, pane, opened(path), "s")
    rendered = body(pane, answer)
    assert rendered.split("\n")[:3] == ["Ship to:", "Ada Lovelace", "12 Analytical Row"]
    assert "**" not in rendered and "Done, 2*3." in rendered  # Markdown still rendered

    index = pane.model.index(0, 0)
    menu = pane.menus.build_context_menu(index)
    [toggle] = [a for a in menu.actions() if a.text() == "Show as Plain Text"]
    assert not toggle.isChecked()
    toggle.setChecked(True)  # this message only
    assert body(pane, answer) == ASSISTANT_TEXT
    toggle.setChecked(False)
    assert body(pane, answer) == rendered

    pane.menus.set_all_plain(True)  # the View menu's switch
    assert body(pane, answer) == ASSISTANT_TEXT
    menu = pane.menus.build_context_menu(index)
    [toggle] = [a for a in menu.actions() if a.text() == "Show as Plain Text"]
    assert toggle.isChecked()
    pane.menus.set_all_plain(False)
    assert body(pane, answer) == rendered


def test_the_global_plain_text_switch_is_remembered(qtbot, window, tmp_path):
    from fluxgui.qt.window import MainWindow

    action = window.actions_by_name["plain_text"]
    assert not action.isChecked() and not window.conversation.delegate.all_plain
    action.setChecked(True)
    assert window.conversation.delegate.all_plain
    again = MainWindow()
    qtbot.addWidget(again)
    try:
        assert again.actions_by_name["plain_text"].isChecked()
        assert again.conversation.delegate.all_plain
    finally:
        again.close()
    action.setChecked(False)


# --------------------------------------------------------------------------- point 2


@pytest.mark.qt_log_ignore(OFFSCREEN_NOISE, r"^This plugin does not support raise\(\)$")
def test_hidden_characters_are_markers_with_a_warning_badge_and_raw_values_stay_exact(
    qtbot, pane, opened, tmp_path
):
    path = write_agents_store(
        tmp_path / "h.db", {"s": [[{"role": "user", "content": t} for t in HOSTILE.values()]]}
    )
    shown = dict(zip(HOSTILE, show(qtbot, pane, opened(path), "s"), strict=True))
    assert body(pane, shown["bidi"]) == "file⟨U+202E⟩exe.txt says evil"
    assert body(pane, shown["zero-width"]) == "pay⟨U+200B⟩pal.com⟨U+2060⟩"
    assert body(pane, shown["controls"]) == "before⟨NUL⟩after ⟨ESC⟩[31mred⟨BEL⟩ bell"
    assert body(pane, shown["surrogate"]) == "half ⟨U+D83D⟩ of an emoji"
    delegate = pane.delegate
    for name in ("bidi", "zero-width"):
        badge = delegate.hidden_badge(shown[name])
        assert badge is not None and badge[0] == "⚠ hidden characters"
        assert name != "bidi" or "U+202E RIGHT-TO-LEFT OVERRIDE" in badge[1]
        assert name != "zero-width" or "U+200B ZERO WIDTH SPACE" in badge[1]
        assert "hidden characters" in delegate.header_text(shown[name])
    assert delegate.hidden_badge(shown["controls"]) is None  # markers enough: not a trick
    # The badge's tooltip lists them.
    m = shown["bidi"]
    index = pane.model.index(pane.model.row_of(m.id), 0)
    pane.view.scrollTo(index)
    rows = delegate.layout_rows(pane.view.visualRect(index), m)
    [part] = [p for p in delegate.header_parts(rows.header, m) if p.name == "hidden"]
    pos = part.rect.center()
    QApplication.sendEvent(
        pane.view.viewport(),
        QHelpEvent(QEvent.Type.ToolTip, pos, pane.view.viewport().mapToGlobal(pos)),
    )
    qtbot.waitUntil(lambda: "RIGHT-TO-LEFT OVERRIDE" in QToolTip.text(), timeout=5_000)
    QToolTip.hideText()

    # The inspector: the value pane shows markers, the tree keeps the stored value.
    pane.view.setCurrentIndex(pane.model.index(pane.model.row_of(shown["controls"].id), 0))
    inspector = pane.inspector
    text_item = next(
        inspector.tree.topLevelItem(0).child(i)
        for i in range(inspector.tree.topLevelItem(0).childCount())
        if inspector.tree.topLevelItem(0).child(i).text(0) == "text"
    )
    inspector.tree.setCurrentItem(text_item)
    assert inspector.value_view.toPlainText() == "before⟨NUL⟩after ⟨ESC⟩[31mred⟨BEL⟩ bell"
    kept = inspector._values[text_item.data(1, Qt_VALUE_ROLE())]
    assert kept == HOSTILE["controls"]


def Qt_VALUE_ROLE() -> int:  # noqa: N802 - reads like the constant it returns
    from fluxgui.qt.inspector import VALUE_ROLE

    return VALUE_ROLE


# --------------------------------------------------------------------------- points 3, 4

FLUX_TOOLS = [
    {"role": "user", "content": "Weather in Paris and Lima?"},
    {
        "role": "assistant",
        "content": "Checking both.",
        "metadata": {"tool_calls": [
            {"id": "call_p", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
            {"id": "call_l", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Lima"}'}},
        ]},
    },
    {"role": "tool", "content": "18 C, cloudy", "metadata": {"tool_call_id": "call_p", "name": "get_weather"}},
    {"role": "tool", "content": "24 C, sunny", "metadata": {"tool_call_id": "call_l", "name": "get_weather"}},
    {"role": "assistant", "content": "Paris 18 C, Lima 24 C.", "metadata": ["a", "list", 3]},
]


def test_flux_tool_calls_show_in_the_assistant_card_and_pair_with_the_tool_rows(
    qtbot, pane, opened, tmp_path
):
    path = write_flux_store(tmp_path / "t.db", {"s": FLUX_TOOLS})
    user, call, out_p, out_l, final = show(qtbot, pane, opened(path), "s")
    assert (call.kind, call.text) == ("message", "Checking both.")  # one message, as stored
    assert (out_p.kind, out_l.kind) == ("tool_output", "tool_output")
    delegate = pane.delegate
    text = body(pane, call)
    assert text.startswith("Checking both.\n")
    assert f"get_weather   call_p  ·  → output #{out_p.id}" in text
    assert f"get_weather   call_l  ·  → output #{out_l.id}" in text
    assert '{\n  "city": "Paris"\n}' in text  # pretty arguments
    assert delegate.pair_text(call) == f"2 tool calls → output #{out_p.id}, #{out_l.id}"
    assert delegate.pair_text(out_p) == f"← get_weather #{call.id}"
    assert pane.pairs.partner(out_l) is call and pane.pairs.partner(call) is out_p
    # Metadata that is a list stays that list; the kind comes from the role.
    assert (final.kind, final.metadata) == ("message", ["a", "list", 3])
    assert delegate.pair_text(final) == ""
    # The context menu jumps from the output to its call.
    menu = pane.menus.build_context_menu(pane.model.index(pane.model.row_of(out_p.id), 0))
    [go] = [a for a in menu.actions() if a.text() == "Go to tool call"]
    go.trigger()
    assert pane.current_message() is call
    pane.view.viewport().grab()
    json.dumps(final.metadata)  # still JSON


def test_a_page_of_tool_calls_is_built_once_before_it_is_shown(qtbot, pane, opened, tmp_path):
    # A document shows its calls' outputs: built before they were paired, each would be
    # built again when the page goes in (a stall when an earlier page comes in).
    turns = []
    for n in range(150):
        turns += [
            {"role": "user", "content": f"Weather {n}?"},
            {"role": "assistant", "content": f"Checking {n}.", "metadata": {"tool_calls": [
                {"id": f"call_{n}", "type": "function",
                 "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}},
            {"role": "tool", "content": f"{n} C", "metadata": {"tool_call_id": f"call_{n}"}},
        ]
    path = write_flux_store(tmp_path / "calls.db", {"s": turns})
    store = opened(path)
    delegate = pane.delegate
    with qtbot.waitSignal(pane.loaded, timeout=20_000):
        pane.show_session(store, "s")
    qtbot.waitUntil(lambda: not pane.busy, timeout=20_000)
    last_call = pane.model.message(pane.model.rowCount() - 2)
    assert delegate.call_outputs(last_call) == {
        "call_149": f"→ output {pane.model.message(pane.model.rowCount() - 1).short_label}"}
    pane.view.viewport().grab()
    assert delegate.built == pane.loaded_count  # one document per message, none twice
    bar = pane.view.verticalScrollBar()
    for _ in range(2):
        loaded, built = pane.loaded_count, delegate.built
        with qtbot.waitSignal(pane.earlierLoaded, timeout=20_000) as blocker:
            bar.setValue(0)
        qtbot.waitUntil(lambda: not pane.busy, timeout=20_000)
        assert blocker.args == [pane.page_size] and pane.loaded_count == loaded + pane.page_size
        for row in range(0, pane.page_size, 10):  # paint the new page's rows
            pane.view.scrollTo(pane.model.index(row, 0))
            pane.view.viewport().grab()
        assert delegate.built - built == pane.page_size, "documents built twice"
    calls = [m for m in pane.model.messages if m.kind == "message" and m.metadata]
    assert all("no output" not in delegate.call_outputs(m).values() for m in calls[1:])
