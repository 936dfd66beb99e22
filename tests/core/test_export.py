"""The export writers (fluxgui.core.export) on messages read from stores the real libraries
wrote: JSON and JSONL parse, Markdown reads as a transcript, HTML is one inert page.

The HTML test fills the stores with hostile content (tags, scripts, event handlers,
javascript: links, remote images in Markdown and HTML, CSS url(), right-to-left
overrides, NULs, a huge text) and parses the page with html.parser: no script, no event
handler attribute, no remote URL in any attribute or in the CSS, and every hostile text
still shown as text.
"""

from __future__ import annotations

import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import all_messages, all_sessions

from fluxgui.adapters import open_store
from fluxgui.core.export import EXPORT_FORMATS, make_writer
from fluxgui.core.visible import visible
from fluxgui.services.export import export_sessions

HUGE = "A" * 1_500_000 + "<script>tail()</script>"
HOSTILE_TEXTS = [
    "<script>alert('x')</script>",
    '<img src="https://evil.example/pixel.png" onerror="alert(1)">',
    '<a href="javascript:alert(1)">click</a>',
    "![tracker](https://evil.example/t.png) and [link](javascript:alert(2))",
    "<style>body{background:url(http://evil.example/bg.png)}</style>",
    '<link rel="stylesheet" href="//evil.example/x.css">',
    "</pre></div></article><svg onload=alert(3)>",
    '" onmouseover="alert(4)" x="',
    "\u202eevil override\u202c and \u2067isolate",
    "nul\x00byte and bell\x07",
    "<iframe srcdoc=\"<script>alert(5)</script>\"></iframe>",
    "<meta http-equiv=\"refresh\" content=\"0;url=https://evil.example/\">",
    "<base href=\"https://evil.example/\">",
    "@import url('https://evil.example/x.css');",
]
HOSTILE_SID = "<script>sid()</script>\u202e//evil.example"


async def hostile_agents(path: Path) -> None:
    items: list[dict] = [{"role": "user", "content": t} for t in HOSTILE_TEXTS]
    items += [
        {"role": "user", "content": [{"type": "input_text", "text": HUGE}]},
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "<script>tool()</script>",
            "arguments": json.dumps({"url": "https://evil.example/", "html": "<img src=//x onerror=y>"}),
        },
        {"type": "function_call_output", "call_id": "c1", "output": "<script>out()</script> https://evil.example/"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "<a href='https://evil.example/'>x</a>", "annotations": []}],
        },
        {"type": "reasoning", "id": "r", "summary": [{"type": "summary_text", "text": "<script>think()</script>"}]},
        {"type": "unknown_thing<script>", "payload": "<b onclick=z>"},
    ]
    for sid in (HOSTILE_SID, "plain"):
        session = AgentsSQLiteSession(sid, str(path))
        try:
            await session.add_items(items if sid != "plain" else items[:2])
        finally:
            session.close()


async def hostile_flux(path: Path) -> None:
    await FluxSQLiteSession(str(path), session_id=HOSTILE_SID).add_messages(
        [{"role": "user", "content": t, "metadata": {"note": t}} for t in HOSTILE_TEXTS]
        + [{"role": '<svg onload="alert(6)">', "content": "role attack"}]
    )


class Page(HTMLParser):
    """Everything the page is made of: tags, attributes, style text, shown text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self.stack: list[str] = []
        self.bdi_text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            self.attrs.append((tag, name, value or ""))
        if tag not in ("meta",):
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            self.attrs.append((tag, name, value or ""))

    def handle_endtag(self, tag):
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data):
        if self.stack and self.stack[-1] == "style":
            self.styles.append(data)
        else:
            self.text.append(data)
        if "bdi" in self.stack:
            self.bdi_text.append(data)

    def handle_comment(self, data):
        raise AssertionError(f"a comment in the page: {data[:80]!r}")

    def handle_pi(self, data):
        raise AssertionError(f"a processing instruction in the page: {data[:80]!r}")


ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "main", "h1", "section", "h2", "p",
    "article", "header", "b", "span", "div", "pre", "code", "details", "summary", "bdi",
}
REMOTE = re.compile(r"url\s*\(|https?:|//|@import|javascript:", re.IGNORECASE)


def check_inert(html_text: str) -> Page:
    page = Page()
    page.feed(html_text)
    page.close()
    assert "script" not in page.tags
    assert set(page.tags) <= ALLOWED_TAGS, set(page.tags) - ALLOWED_TAGS
    for tag, name, value in page.attrs:
        assert not name.lower().startswith("on"), (tag, name)
        assert name.lower() not in ("src", "href", "srcset", "action", "style", "background"), (tag, name)
        assert not REMOTE.search(value), (tag, name, value)
    for css in page.styles:
        assert not REMOTE.search(css), css
    # The one style element is the writer's own; the CSP forbids everything else.
    assert page.tags.count("style") == 1
    csp = [v for t, n, v in page.attrs if n == "content" and "default-src" in v]
    assert csp and "default-src 'none'" in csp[0] and "script-src" not in csp[0]
    assert "\x00" not in html_text
    return page


@pytest.mark.parametrize("kind", ["agents", "flux"])
async def test_html_export_is_inert_and_shows_the_hostile_text(tmp_path, kind):
    path = tmp_path / f"{kind}.db"
    await (hostile_agents(path) if kind == "agents" else hostile_flux(path))
    out = tmp_path / "page.html"
    async with await open_store(str(path)) as store:
        result = await export_sessions(store, out, "html")
        n = sum(s.messages for s in await all_sessions(store))
    assert result.messages == n
    html_text = out.read_text(encoding="utf-8")
    page = check_inert(html_text)
    shown = "".join(page.text)
    # Every hostile text is on the page, as text, hidden characters as visible markers
    # (NUL as ␀, a bell as ␇, a bidi override as ⟨U+202E⟩): none of them raw.
    for t in HOSTILE_TEXTS:
        assert visible(t) in shown, t
    for hidden in ("\x00", "\x07", "\u202e", "\u2067"):
        assert hidden not in html_text
    assert "Session " + visible(HOSTILE_SID) in shown
    assert visible(HOSTILE_SID) in "".join(page.bdi_text)
    if kind == "agents":
        assert HUGE in shown
        assert "<script>tool()</script>" in "".join(page.bdi_text)
        assert "<script>think()</script>" in shown and "<script>out()</script>" in shown
        assert page.tags.count("article") == n
    else:
        assert '<svg onload="alert(6)">' in "".join(page.bdi_text)
        # metadata is shown (escaped) too
        assert '"note": "<script>alert(\'x\')</script>"' in shown


async def test_html_without_metadata(tmp_path):
    path = tmp_path / "flux.db"
    await hostile_flux(path)
    out = tmp_path / "page.html"
    async with await open_store(str(path)) as store:
        await export_sessions(store, out, "html", metadata=False)
    page = check_inert(out.read_text(encoding="utf-8"))
    assert "details" not in page.tags and '"note"' not in "".join(page.text)


async def messages_of(path: Path) -> tuple[str, list]:
    async with await open_store(str(path)) as store:
        out = []
        for info in await all_sessions(store):
            out.append((info, await all_messages(store, info.id)))
        return store.format, out


def write(fmt: str, store_format: str, sessions: list, *, metadata: bool = True) -> str:
    buf = io.StringIO()
    writer = make_writer(fmt, buf, metadata=metadata)
    writer.begin(store_format, "Title *with* `markup`")
    for info, msgs in sessions:
        writer.session(info)
        for start in range(0, len(msgs), 3):  # several pages
            writer.messages(msgs[start : start + 3])
        writer.end_session()
    writer.end()
    assert writer.sessions == len(sessions)
    assert writer.messages_written == sum(len(m) for _i, m in sessions)
    return buf.getvalue()


AGENTS_ITEMS = [
    {"role": "system", "content": "Be exact."},
    {"role": "user", "content": "Run ```code``` please"},
    {"type": "function_call", "call_id": "c1", "name": "run_code", "arguments": '{"src": "print(1)"}'},
    {"type": "function_call_output", "call_id": "c1", "output": '{"stdout": "1\\n"}'},
    {"type": "reasoning", "id": "r", "summary": [{"type": "summary_text", "text": "It printed 1."}]},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It printed `1`.", "annotations": []}]},
]


async def agents_store(tmp_path: Path) -> Path:
    path = tmp_path / "agents.db"
    for sid, items in (("first", AGENTS_ITEMS), ("second", AGENTS_ITEMS[:2])):
        session = AgentsSQLiteSession(sid, str(path))
        try:
            await session.add_items(items)
        finally:
            session.close()
    return path


async def test_json_and_jsonl_carry_every_field(tmp_path):
    store_format, sessions = await messages_of(await agents_store(tmp_path))
    doc = json.loads(write("json", store_format, sessions))
    assert doc["fluxgui_export"] == 1 and doc["format"] == "agents"
    assert [s["id"] for s in doc["sessions"]] == [i.id for i, _m in sessions]
    for s, (info, msgs) in zip(doc["sessions"], sessions, strict=True):
        assert {k: s[k] for k in ("created_at", "updated_at")} == {"created_at": info.created_at, "updated_at": info.updated_at}
        assert s["messages"] == [m.to_dict() for m in msgs]
    lines = write("jsonl", store_format, sessions).splitlines()
    assert len(lines) == sum(len(m) for _i, m in sessions)
    records = [json.loads(line) for line in lines]
    assert [(r.pop("session_id"), r) for r in records] == [
        (info.id, m.to_dict()) for info, msgs in sessions for m in msgs
    ]


async def test_markdown_is_a_transcript(tmp_path):
    store_format, sessions = await messages_of(await agents_store(tmp_path))
    md = write("md", store_format, sessions)
    assert md.startswith("# Title \\*with\\* \\`markup\\`\n")
    assert "## Session first" in md and "## Session second" in md
    info, msgs = [s for s in sessions if s[0].id == "first"][0]
    for m in msgs:
        # each message's heading: its role, its kind, its time and its id
        heading = f"### **{m.role}**"
        assert heading in md
        assert m.created_at and m.created_at in md
        assert f"#{m.id}\n" in md
    assert "· tool call ·" in md and "Tool call `run_code`:" in md
    assert '```json\n{\n  "src": "print(1)"\n}\n```' in md  # the arguments, pretty
    assert "· tool output ·" in md and '"stdout": "1\\n"' in md
    assert "> It printed 1." in md  # reasoning as a quote
    assert "It printed `1`." in md
    assert "Run ```code``` please" in md
    assert f"_{info.messages} messages · created {info.created_at}" in md


async def test_markdown_fences_outlast_the_backticks_inside(tmp_path):
    path = tmp_path / "flux.db"
    await FluxSQLiteSession(str(path), session_id="s").add_messages(
        [{"role": "tool", "content": "````\nnot the end\n````"}, {"role": "user", "content": "after"}]
    )
    store_format, sessions = await messages_of(path)
    md = write("md", store_format, sessions)
    assert "`````\n````\nnot the end\n````\n`````\n" in md


async def test_markdown_metadata_and_without(tmp_path):
    path = tmp_path / "flux.db"
    await FluxSQLiteSession(str(path), session_id="s").add_messages(
        [{"role": "assistant", "content": "hi", "metadata": {"model": "m-42"}}]
    )
    store_format, sessions = await messages_of(path)
    assert '"model": "m-42"' in write("md", store_format, sessions)
    assert "m-42" not in write("md", store_format, sessions, metadata=False)
    for fmt in ("json", "jsonl"):
        assert "m-42" in write(fmt, store_format, sessions)
        assert "m-42" not in write(fmt, store_format, sessions, metadata=False)


async def test_lone_surrogates_are_written_as_json_escapes(tmp_path):
    path = tmp_path / "agents.db"
    session = AgentsSQLiteSession("s", str(path))
    try:
        await session.add_items([{"role": "user", "content": "half \ud83d of an emoji"}])
    finally:
        session.close()
    async with await open_store(str(path)) as store:
        for fmt in EXPORT_FORMATS:
            out = tmp_path / f"out.{fmt}"
            await export_sessions(store, out, fmt)
            text = out.read_bytes().decode("utf-8")  # valid UTF-8
            # JSON keeps the value exact (an escape); a transcript shows a marker
            assert ("\\ud83d" if fmt in ("json", "jsonl") else "⟨U+D83D⟩") in text
    assert json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["sessions"][0]["messages"][0]["text"] == "half \ud83d of an emoji"


def test_unknown_format():
    with pytest.raises(ValueError, match="unknown export format 'pdf'"):
        make_writer("pdf", io.StringIO())
