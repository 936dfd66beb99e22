"""Export safety on stores the real libraries wrote (issue 13, points 9, 12 and 13).

* Markdown: the exported .md, rendered by a real CommonMark renderer (markdown-it-py,
  raw HTML allowed, its own link filter off), has no script, no image, no on* attribute,
  no link but http(s)/mailto, no raw HTML but the writer's own ``<details>``; user,
  system, developer and tool text renders to exactly the stored text, line by line;
  assistant text keeps its single line breaks.
* JSON/JSONL: ``NaN``/``Infinity`` stored by the libraries come out as strings, the file
  is strict JSON, and the writer counts the replacements.
* Big items: a message, tool output or metadata above the streaming threshold is
  written correctly, and writing one holds far less than a copy of it.
"""

from __future__ import annotations

import html
import io
import json
import math
import tracemalloc
from html.parser import HTMLParser
from pathlib import Path

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import all_messages, all_sessions
from markdown_it import MarkdownIt

from fluxgui.adapters import open_store
from fluxgui.core.visible import visible
from fluxgui.core.export import EXPORT_FORMATS, make_writer
from fluxgui.core.jsonsafe import BIG, Counter, iter_json
from fluxgui.services.export import export_sessions

SAFE = ("http://", "https://", "mailto:")
WRITER_HTML = {"<details><summary>metadata</summary>\n", "</details>\n"}

AS_TYPED = [
    "2*3*4 = 24",
    "__init__ is _not_ emphasis, **nor this**",
    "# 1 priority: refund",
    "Jane Doe\n12 High Street\nFlat 3\nSpringfield 12345",
    "    four spaces\n\ttab\n  two",
    "<script>alert('u')</script> <img src=x onerror=alert(2)> [x](javascript:y)",
    "![tracker](https://evil.example/t.png) <!-- c --> <details>open</details>",
    "Run ```code``` please\n````\nfence\n````",
    "[ref]: javascript:alert(3)\n\n[ref] <javascript:alert(4)>",
    "windows\r\nline ends and a nul\x00 here",
]
ASSISTANT = [
    "first line\nsecond line\n\n- item one\n- item two",
    "Use `a<b` and <b>bold</b> <script>alert(5)</script>",
    "![img](https://evil.example/i.png) [js](javascript:alert(6)) [ok](https://ok.example/)",
    "[a [b](javascript:x)](https://ok.example/) <http://ok.example> <javascript:alert(7)>",
    "[r]: javascript:alert(8)\n\n[r] and [s][r]",
    "```html\n<script>in code</script>\n```\n<!-- comment --> <details><summary>x</summary></details>",
    "```\nunclosed fence <b>",
]


async def agents_store(path: Path) -> None:
    items: list[dict] = [{"role": "system", "content": AS_TYPED[0]}]
    items += [{"role": "developer", "content": AS_TYPED[1]}]
    items += [{"role": "user", "content": t} for t in AS_TYPED]
    items += [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": t, "annotations": []}]}
        for t in ASSISTANT
    ]
    items += [
        {"type": "function_call", "call_id": "c", "name": "x`\n<script>", "arguments": '{"q": "<img src=x>"}'},
        {"type": "function_call_output", "call_id": "c", "output": "<script>out</script>\n![i](https://e/i.png)"},
        {"type": "reasoning", "id": "r",
         "summary": [{"type": "summary_text", "text": "<script>t</script>\n![i](https://e/i)"}]},
    ]
    session = AgentsSQLiteSession("<script>sid</script> [x](javascript:y)", str(path))
    try:
        await session.add_items(items)
    finally:
        session.close()


async def flux_store(path: Path) -> None:
    msgs = [{"role": "system", "content": AS_TYPED[2]}]
    msgs += [{"role": "user", "content": t, "metadata": {"note": t}} for t in AS_TYPED]
    msgs += [{"role": "assistant", "content": t} for t in ASSISTANT]
    msgs += [{"role": "tool", "content": "<script>tool</script>\n```\nx"}]
    msgs += [{"role": "<img src=x onerror=y>", "content": "odd role"}]
    await FluxSQLiteSession(str(path), session_id="s").add_messages(msgs)


class Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(tag, k, v or "") for k, v in attrs]

    handle_startendtag = handle_starttag


def as_rendered(text: str) -> str:
    """What a CommonMark renderer makes of stored text in a code block (the export shows
    hidden characters as visible markers: a carriage return as ␍, NUL as ␀)."""
    return visible(text) + "\n"


async def export_md(tmp_path: Path, kind: str) -> tuple[str, list]:
    path = tmp_path / f"{kind}.db"
    await (agents_store(path) if kind == "agents" else flux_store(path))
    out = tmp_path / "out.md"
    async with await open_store(str(path)) as store:
        await export_sessions(store, out, "md")
        [info] = await all_sessions(store)
        msgs = await all_messages(store, info.id)
    return out.read_text(encoding="utf-8"), msgs


@pytest.mark.parametrize("kind", ["agents", "flux"])
@pytest.mark.parametrize("preset", ["commonmark", "default"])
async def test_markdown_export_renders_inert_and_as_typed(tmp_path, kind, preset):
    md_text, msgs = await export_md(tmp_path, kind)
    md = MarkdownIt(preset, {"html": True})
    md.validateLink = lambda url: True  # see every link, whatever its scheme
    rendered = Html()
    rendered.feed(md.render(md_text))
    assert not {"script", "img", "iframe", "svg", "style"} & set(rendered.tags)
    for tag, name, value in rendered.attrs:
        assert not name.lower().startswith("on"), (tag, name, value)
        assert name not in ("src", "srcset", "style"), (tag, name, value)
        if name == "href":
            assert value.lower().startswith(SAFE), value
    assert set(rendered.tags) <= {
        "h1", "h2", "h3", "p", "em", "strong", "code", "pre", "br", "a", "ul", "ol", "li",
        "blockquote", "hr", "details", "summary", "table", "thead", "tbody", "tr", "th", "td", "s",
    }, set(rendered.tags)

    toks = md.parse(md_text)
    assert {t.content for t in toks if t.type == "html_block"} <= WRITER_HTML
    children = [c for t in toks for c in (t.children or [])]
    assert not [c for c in children if c.type in ("html_inline", "image")]
    hrefs = [c.attrGet("href") for c in children if c.type == "link_open"]
    # the safe links stay; images are links at most
    assert hrefs.count("https://ok.example/") == 2
    assert set(hrefs) == {"https://ok.example/", "https://evil.example/i.png"} | (
        {"https://e/i"} if kind == "agents" else set()
    )

    # Each message's body follows its heading ("… · #id"): literal text is one code
    # block holding exactly the stored text.
    bodies: dict[int, list] = {}
    current = None
    for i, t in enumerate(toks):
        if t.type == "heading_open" and t.tag == "h3":
            current = int(toks[i + 1].content.rsplit("#", 1)[1])
            bodies[current] = []
        elif t.type == "heading_close" or (i and toks[i - 1].type == "heading_open"):
            pass
        elif t.type in ("heading_open", "hr") or (t.type == "html_block" and "<details>" in t.content):
            current = None
        elif current is not None:
            bodies[current].append(t)
    assert sorted(bodies) == sorted(m.id for m in msgs)
    literal = [m for m in msgs if m.kind == "message" and m.role != "assistant"]
    assert len(literal) >= len(AS_TYPED) + 1
    for m in literal:
        fences = [t for t in bodies[m.id] if t.type == "fence"]
        assert [f.content for f in fences] == [as_rendered(m.text)], m.text
    first = next(m for m in msgs if m.role == "assistant" and m.text.startswith("first line"))
    inline = [c for t in bodies[first.id] if t.children for c in t.children]
    assert [c.type for c in inline[:3]] == ["text", "hardbreak", "text"]
    code = [c.content for m in msgs if m.text.startswith("Use `a<b`") for t in bodies[m.id] for c in t.children or []
            if c.type == "code_inline"]
    assert code == ["a<b"]


async def test_markdown_tool_call_name_cannot_break_out(tmp_path):
    md_text, _msgs = await export_md(tmp_path, "agents")
    assert "Tool call `x <script>`:" in md_text


# --------------------------------------------------------------------------- NaN / Infinity


def strict_json(text: str):
    def refuse(name):
        raise AssertionError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


async def test_non_finite_numbers_become_strings_and_are_counted(tmp_path):
    path = tmp_path / "agents.db"
    session = AgentsSQLiteSession("s", str(path))
    try:
        await session.add_items([
            {"role": "user", "content": "x", "score": math.nan},
            {"role": "user", "content": "y", "scores": [math.inf, -math.inf, 1.5]},
            {"role": "user", "content": "big " + "z" * (BIG + 10), "score": math.nan},
        ])
    finally:
        session.close()
    assert b"NaN" in Path(path).read_bytes()  # stored as Python's json writes it
    async with await open_store(str(path)) as store:
        [info] = await all_sessions(store)
        msgs = await all_messages(store, info.id)
        for fmt in ("json", "jsonl"):
            await export_sessions(store, tmp_path / f"out.{fmt}", fmt)
    for fmt in ("json", "jsonl"):
        buf = io.StringIO()
        writer = make_writer(fmt, buf)
        writer.begin("agents")
        writer.session(info)
        writer.messages(msgs)
        writer.end_session()
        writer.end()
        assert writer.replaced_non_finite == 4
        assert buf.getvalue() == (tmp_path / f"out.{fmt}").read_text(encoding="utf-8")
    doc = strict_json((tmp_path / "out.json").read_text(encoding="utf-8"))
    raws = [m["raw"] for m in doc["sessions"][0]["messages"]]
    lines = [strict_json(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["raw"] for r in lines] == raws
    assert raws[0]["score"] == "NaN" and raws[1]["scores"] == ["Infinity", "-Infinity", 1.5]
    assert raws[2]["score"] == "NaN" and raws[2]["content"] == msgs[2].text
    # the HTML and Markdown transcripts show them as text and count nothing
    buf = io.StringIO()
    writer = make_writer("md", buf)
    writer.begin("agents")
    writer.session(info)
    writer.messages(msgs[:2])
    writer.end()
    assert writer.replaced_non_finite == 0


async def test_flux_metadata_infinity(tmp_path):
    path = tmp_path / "flux.db"
    await FluxSQLiteSession(str(path), session_id="s").add_messages(
        [{"role": "user", "content": "x", "metadata": {"t": math.inf, "ok": 1}}]
    )
    async with await open_store(str(path)) as store:
        await export_sessions(store, tmp_path / "out.jsonl", "jsonl")
    [record] = [strict_json(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert record["metadata"] == {"t": "Infinity", "ok": 1}


# --------------------------------------------------------------------------- big items


@pytest.mark.parametrize("value", [
    {"a": [1, 2.5, -0.0, 10**30, True, False, None], "b": {"c": "d\u00e9\U0001f600\ud83d\"\\\n"}, "e": []},
    {5: "int key", "s": "x" * 700_000 + "\u2028\x00" + "<" * 300_000},
    ["lone", "\udc00", {}, [[]]],
    "plain",
])
def test_iter_json_is_json_dumps(value):
    counter = Counter()
    assert "".join(iter_json(value, counter)) == json.dumps(value, ensure_ascii=False)
    assert counter.replaced == 0


LINE = "x <b>&amp;</b> `` ``` \" \\ \u00e9 \U0001f600\n"


def big_text(chars: int) -> str:
    return (LINE * (chars // len(LINE) + 1))[:chars]


async def test_big_items_are_written_completely(tmp_path):
    text = big_text(BIG + 1000)
    meta = {"documents": [{"id": i, "text": LINE * 40} for i in range(BIG // (len(LINE) * 40) + 2)]}
    tool_json = json.dumps({"rows": [LINE] * (BIG // len(LINE) + 2)})
    path = tmp_path / "flux.db"
    await FluxSQLiteSession(str(path), session_id="s").add_messages([
        {"role": "user", "content": text},
        {"role": "assistant", "content": "small", "metadata": meta},
        {"role": "tool", "content": tool_json},
    ])
    async with await open_store(str(path)) as store:
        msgs = await all_messages(store, "s")
        for fmt in EXPORT_FORMATS:
            await export_sessions(store, tmp_path / f"out.{fmt}", fmt)
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [{k: v for k, v in r.items() if k != "session_id"} for r in lines] == [m.to_dict() for m in msgs]
    doc = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert doc["sessions"][0]["messages"] == [m.to_dict() for m in msgs]

    md_text = (tmp_path / "out.md").read_text(encoding="utf-8")
    assert f"````text\n{text}\n````\n" in md_text  # user text as stored
    compact = json.dumps(meta, ensure_ascii=False)
    assert f"````json\n{compact}\n````" in md_text  # big metadata: compact, as it is
    assert f"\n{tool_json}\n" in md_text  # big tool JSON: not re-indented

    page = (tmp_path / "out.html").read_text(encoding="utf-8")
    assert f'<div class="text">{html.escape(text)}</div>' in page
    assert f"<pre>{html.escape(compact)}</pre>" in page
    assert f"<pre>{html.escape(tool_json)}</pre>" in page


PROSE = "plain words, a <tag>, `code` and [a link](https://example.com/) \U0001f600\n"


class Sink:
    """A text stream that keeps nothing but the number of characters written."""

    def __init__(self) -> None:
        self.chars = 0

    def write(self, s: str) -> int:
        self.chars += len(s)
        return len(s)


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
@pytest.mark.parametrize("role", ["user", "assistant"])
async def test_writing_a_big_message_holds_far_less_than_a_copy(tmp_path, fmt, role):
    size = 5_000_000  # characters, above the streaming threshold
    text = big_text(size) if role == "user" else (PROSE * (size // len(PROSE) + 1))[:size]
    path = tmp_path / "agents.db"
    session = AgentsSQLiteSession("s", str(path))
    try:
        if role == "user":
            await session.add_items([{"role": role, "content": text}])
        else:
            await session.add_items([{"type": "message", "role": role, "content": [
                {"type": "output_text", "text": "<script>x</script> [a](javascript:b)\n" + text, "annotations": []}]}])
    finally:
        session.close()
    async with await open_store(str(path)) as store:
        [info] = await all_sessions(store)
        [m] = await all_messages(store, "s")
    sink = Sink()
    writer = make_writer(fmt, sink)  # type: ignore[arg-type]
    writer.begin("agents")
    writer.session(info)
    tracemalloc.start()
    try:
        writer.messages([m])
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    writer.end()
    assert sink.chars > len(m.text)  # everything was written…
    # …holding a few megabytes at a time: half the text's own size at most (it
    # takes 20 MB: it has an emoji), not a copy of it nor of its JSON (text and raw
    # item both hold it)
    assert peak < 2 * size, f"{fmt}: peak {peak / 1e6:.1f} MB"
