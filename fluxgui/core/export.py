"""Export writers: sessions and their Messages as JSON, JSONL, Markdown or HTML.

Each writer streams: it is fed one session header and then pages of messages, and writes
to a text stream as it goes, so memory does not grow with the export. The caller owns the
file (see :mod:`fluxgui.services.transfer`, which writes atomically).

* **json** — ``{"fluxgui_export": 1, "format", "sessions": [{"id", "created_at",
  "updated_at", "messages": [Message, …]}, …]}``; round-trips through import.
* **jsonl** — one Message per line, with its ``session_id``; round-trips too.
* with reviews (``export --with-reviews``): a reviewed session's review record
  (``{"state", "tags", "scores", "notes", "reviewer", "updated_at", …}``) is the JSON
  session's ``"review"``, and in JSONL a line ``{"session_id", "review"}`` before the
  session's messages (import skips it).
* **md** — a readable transcript: roles, times, tool calls and outputs. Only assistant
  text is Markdown, made safe by :func:`fluxgui.core.mdsafe.markdown` (no raw HTML, no
  image, no link but http(s)/mailto, line breaks kept); user, system, developer and tool
  text is shown exactly as stored (:func:`fluxgui.core.mdsafe.literal_block`).
* **html** — one self-contained page: inline style only, no script, no external resource
  (a Content-Security-Policy forbids them too), every piece of content escaped, ids and
  roles in ``<bdi>``.

Markdown and HTML show hidden characters — controls (NUL, ESC, BEL…), bidi overrides,
zero-width characters, lone surrogates — as visible markers (``␀``, ``⟨U+202E⟩``:
:func:`fluxgui.core.visible.visible`); JSON and JSONL keep every value exact.

JSON and JSONL are valid JSON even when a stored item holds ``NaN`` or an infinity:
such numbers are written as the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` and
counted in :attr:`ExportWriter.replaced_non_finite` (see :mod:`fluxgui.core.jsonsafe`).

Memory: output is gathered in pieces and written about every megabyte. A message whose
text, raw item or metadata holds more than :data:`~fluxgui.core.jsonsafe.BIG` characters
is written in slices (JSON through :func:`~fluxgui.core.jsonsafe.iter_json`, HTML
escaped a slice at a time, Markdown sanitised as it goes), and such metadata or tool
JSON is written compact, as it is, instead of being re-indented; so a huge item costs
about its own size once (the Message itself), not several whole copies.
"""

from __future__ import annotations

import html
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO, cast

from . import mdsafe
from .display import compaction_summary
from .htmlstyle import CSP, CSS
from .jsonrecords import RowPage, big_message, message_record, row_records
from .jsonsafe import BIG, SLICE, Counter, dumps, is_big, iter_json
from .mdsafe import slices
from .model import Message, SessionInfo
from .visible import visible

EXPORT_FORMATS = ("json", "jsonl", "md", "html")
EXPORT_VERSION = 1
SUFFIXES = {"json": ".json", "jsonl": ".jsonl", "md": ".md", "html": ".html"}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class ExportWriter(ABC):
    """Writes an export to ``out``: ``begin``, then per session ``session`` and
    ``messages`` (any number of pages), then ``end``.

    ``replaced_non_finite`` counts the ``NaN``/``Infinity``/``-Infinity`` numbers the
    JSON and JSONL writers wrote as strings (always 0 for Markdown and HTML, which show
    them as text): a caller can warn that the export differs there from the store.
    """

    def __init__(self, out: TextIO, *, metadata: bool = True) -> None:
        self.out = out
        self.metadata = metadata
        self.format_name = ""
        #: the store keeps a message as its table's columns (flux), not a JSON item
        self.columns = False
        self.title = ""
        self.sessions = 0
        self.messages_written = 0
        self._counter = Counter()
        self._parts: list[str] = []
        self._size = 0

    @property
    def replaced_non_finite(self) -> int:
        """Non-finite numbers written as strings so far (see the class docstring)."""
        return self._counter.replaced

    def begin(self, format_name: str, title: str = "", *, columns: bool = False) -> None:
        """Start the output of a store of ``format_name`` (written in the JSON header)
        whose messages are its table's ``columns`` or stored JSON items."""
        self.format_name = format_name
        self.columns = columns
        self.title = title

    # ----------------------------------------------------------------- buffered output

    def _put(self, text: str) -> None:
        """Queue ``text`` for ``out``; written once a slice's worth is queued (a big
        piece straight away, not joined to the rest)."""
        if len(text) >= SLICE:
            self._flush()
            self.out.write(text)
            return
        self._parts.append(text)
        self._size += len(text)
        if self._size >= SLICE or len(self._parts) >= 4096:
            self._flush()

    def _put_all(self, pieces: Iterable[str]) -> None:
        for piece in pieces:
            self._put(piece)

    def _flush(self) -> None:
        if self._parts:
            text = "".join(self._parts)
            self._parts, self._size = [], 0
            self.out.write(text)

    def _metadata_source(self, m: Message, big: bool) -> tuple[Callable[[], Iterable[str]], str] | None:
        """The message's metadata as readable text: a function giving its pieces (afresh
        on each call), and its language (``"json"`` or ``""``); ``None``: none, or left
        out. An object is indented JSON, or compact JSON as it is when it is big; a flux
        row's metadata text that is not an object is shown as it is. (``big``: the
        message may be big; only then is its metadata measured.)"""
        if not self.metadata:
            return None
        meta = m.metadata
        if meta:
            if big and is_big(meta):
                return (lambda: iter_json(meta, Counter())), "json"
            text = json.dumps(meta, indent=2, ensure_ascii=False)
            return (lambda: (text,)), "json"
        raw = m.raw
        if self.columns and isinstance(raw, str):
            return (lambda: slices(raw)), ""
        return None

    @abstractmethod
    def session(self, info: SessionInfo) -> None: ...

    @abstractmethod
    def messages(self, page: list[Message]) -> None: ...

    def rows(self, page: RowPage) -> None:
        """A page of stored rows (:mod:`.rowjson`), read as Messages here."""
        self.messages(page.messages())

    def end_session(self) -> None:
        pass

    def notes(self, lines: list[str], record: dict[str, Any] | None = None) -> None:
        """The review of the session just begun: the transcripts show its ``lines``
        (state, scores, tags, notes), escaped as message text is; JSON and JSONL write its
        ``record`` (see the module)."""

    @abstractmethod
    def end(self) -> None: ...


class _JsonRecords(ExportWriter):
    """Shared by JSON and JSONL: one record per message, valid JSON, big ones streamed.
    Stored rows become records straight from the rows (:mod:`.rowjson`); a row that
    path leaves is read as a Message and written as the others are."""

    _head = "{"  # how a record starts (JSONL: with its session id)
    _open = _between = _end = ""  # before a session's first record, between two, after each
    _first = True
    _sid: str | None = None  # JSONL: the session's id, in each record

    def messages(self, page: list[Message]) -> None:
        for m in page:
            self._message(m)
        self._flush()
        self.messages_written += len(page)

    def rows(self, page: RowPage) -> None:
        records = row_records(
            page, self._head, "}" + self._end, metadata=self.metadata, columns=self.columns
        )
        if None not in records:  # all of them straight from the rows: one piece
            if records:
                self._put(self._sep() + self._between.join(cast("list[str]", records)))
        else:
            for row, text in zip(page.rows, records):
                if text is None:
                    self._message(page.read(row))
                else:
                    self._put(self._sep() + text)
        self.messages_written += len(page.rows)

    def _sep(self) -> str:
        first, self._first = self._first, False
        return self._open if first else self._between

    def _message(self, m: Message) -> None:
        record = message_record(m, metadata=self.metadata, columns=self.columns)
        if self._sid is not None:
            record = {"session_id": self._sid, **record}
        if big_message(m):
            self._put(self._sep())
            self._put_all(iter_json(record, self._counter))
            self._put(self._end)
        else:
            self._put(self._sep() + dumps(record, self._counter) + self._end)


class JsonWriter(_JsonRecords):
    _open, _between = "\n", ",\n"
    _review: dict[str, Any] | None = None  # the session's, written after its messages

    def notes(self, lines: list[str], record: dict[str, Any] | None = None) -> None:
        self._review = record

    def begin(self, format_name: str, title: str = "", *, columns: bool = False) -> None:
        super().begin(format_name, title, columns=columns)
        self.out.write(
            f'{{"fluxgui_export": {EXPORT_VERSION}, "format": {_dumps(format_name)}, '
            '"sessions": ['
        )

    def session(self, info: SessionInfo) -> None:
        head = info.to_dict()
        head.pop("messages", None)
        prefix = ",\n" if self.sessions else "\n"
        fields = ", ".join(f"{_dumps(k)}: {dumps(v, self._counter)}" for k, v in head.items())
        self._put(f'{prefix}{{{fields}, "messages": [')
        self.sessions += 1
        self._first = True
        self._review = None

    def end_session(self) -> None:
        review = self._review
        self._put("]}" if review is None else f'], "review": {dumps(review, self._counter)}}}')

    def end(self) -> None:
        self._put("\n]}\n")
        self._flush()


class JsonlWriter(_JsonRecords):
    _end = "\n"

    def session(self, info: SessionInfo) -> None:
        self._sid = info.id
        self._head = f'{{"session_id": {dumps(info.id, self._counter)}, '
        self.sessions += 1

    def notes(self, lines: list[str], record: dict[str, Any] | None = None) -> None:
        if record is not None:  # a line of its own, before the session's messages
            self._put(f'{self._head}"review": {dumps(record, self._counter)}}}\n')

    def end(self) -> None:
        self._flush()


# --------------------------------------------------------------------------- Markdown & HTML


def _pretty_json_text(text: str) -> tuple[str, str]:
    """(text, "json") re-indented when it is a JSON object or array; big text (more than
    :data:`BIG` characters) and other text as it is, with ``""``."""
    if len(text) > BIG or text.lstrip()[:1] not in ("{", "["):  # most tool output is not JSON
        return text, ""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False), "json"
    except (ValueError, TypeError, RecursionError):
        return text, ""


def _call_parts(m: Message) -> tuple[str, str]:
    """(tool name, arguments as text) of a tool call."""
    raw = m.raw if isinstance(m.raw, dict) else {}
    name = str(raw.get("name") or raw.get("type") or "tool")
    args = raw.get("arguments", raw.get("input", raw.get("action", "")))
    if not isinstance(args, str):
        args = json.dumps(args, ensure_ascii=False)
    return name, args


def _big_transcript(m: Message) -> bool:
    """Whether what a transcript shows of ``m`` may hold more than :data:`BIG`
    characters (its text, a tool call's arguments, its metadata or metadata text)."""
    return (
        len(m.text) > BIG
        or (m.kind == "tool_call" or isinstance(m.raw, str)) and is_big(m.raw)
        or is_big(m.metadata)
    )


class _Transcript(ExportWriter):
    """Markdown and HTML: each message is a sequence of pieces, joined when it is small
    and written as it comes when it is big."""

    def messages(self, page: list[Message]) -> None:
        for m in page:
            if _big_transcript(m):
                self._put_all(self._message(m, True))
            else:
                self._put("".join(self._message(m, False)))
        self._flush()
        self.messages_written += len(page)

    @abstractmethod
    def _message(self, m: Message, big: bool) -> Iterator[str]:
        """The pieces of ``m`` (``big``: it may hold more than :data:`BIG` characters)."""

    @staticmethod
    def _when(info: SessionInfo) -> str:
        return " · ".join(
            x for x in (
                f"{info.messages} message{'' if info.messages == 1 else 's'}",
                f"created {info.created_at}" if info.created_at else "",
                f"updated {info.updated_at}" if info.updated_at else "",
            ) if x
        )


class MarkdownWriter(_Transcript):
    def begin(self, format_name: str, title: str = "", *, columns: bool = False) -> None:
        super().begin(format_name, title, columns=columns)
        if title:
            self._put(f"# {mdsafe.inline_text(title)}\n\n")

    def session(self, info: SessionInfo) -> None:
        self.sessions += 1
        sep = "\n---\n\n" if self.sessions > 1 else ""
        sid = mdsafe.inline_text(visible(info.id, keep_layout=False))
        self._put(f"{sep}## Session {sid}\n\n_{self._when(info)}_\n\n")

    def notes(self, lines: list[str], record: dict[str, Any] | None = None) -> None:
        if lines:  # (hidden characters as markers, as in message text)
            self._put("".join(f"> {mdsafe.inline_text(visible(line))}\n>\n"
                              for line in lines)[:-2] + "\n")

    def _message(self, m: Message, big: bool) -> Iterator[str]:
        head = [f"**{mdsafe.inline_text(visible(m.role, keep_layout=False))}**"]
        if m.kind != "message":
            head.append(m.kind.replace("_", " "))
        if m.created_at:
            head.append(m.created_at)
        head.append(f"#{m.id}" if m.ref is None else mdsafe.inline_text(visible(m.ref, keep_layout=False)))
        yield f"### {' · '.join(head)}\n\n"
        text = visible(m.text)  # hidden characters as visible markers (the JSON stays exact)
        if m.kind == "tool_call":
            name, args = _call_parts(m)
            name = visible(name)
            body, lang = _pretty_json_text(visible(args))
            yield f"Tool call `{' '.join(name.replace('`', '').split())}`:\n\n"
            yield from mdsafe.literal_block(body, lang)
        elif m.kind == "tool_output":
            yield from mdsafe.literal_block(*_pretty_json_text(text))
        elif m.kind == "reasoning":
            yield from mdsafe.quote(mdsafe.markdown(text))
        elif m.kind == "compaction":
            yield f"_Compacted history: {mdsafe.inline_text(compaction_summary(m))} (opaque)._\n"
        elif m.kind == "other":
            yield from mdsafe.literal_block(text, "")
        elif m.role.lower() == "assistant":
            yield from mdsafe.markdown(text)
            yield "\n"
        else:  # user, system, developer, tool…: exactly as typed
            yield from mdsafe.literal_block(text)
        meta = self._metadata_source(m, big)
        if meta is not None:
            source, lang = meta

            def pieces() -> Iterator[str]:
                return (visible(piece) for piece in source())

            fence = mdsafe.fence_for_pieces(pieces())  # a first look through them
            yield f"\n<details><summary>metadata</summary>\n\n{fence}{lang}\n"
            yield from pieces()
            yield f"\n{fence}\n\n</details>\n"
        yield "\n"

    def end(self) -> None:
        self._flush()


#: control characters HTML does not allow in text (NUL among them): shown as U+FFFD
_HTML_CONTROLS = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f]")


def _h(text: Any) -> str:
    # Hidden characters (NUL, ESC, bidi overrides, zero-width…) as visible markers; any
    # control character left (none: belt and braces) as U+FFFD.
    return _HTML_CONTROLS.sub("\ufffd", html.escape(visible(str(text)), quote=True))


def _h_all(text: str) -> Iterable[str]:
    """``text`` escaped, a quarter slice at a time when it is long (escaping is per
    character: slices may split the text anywhere; each of html.escape's passes makes a
    copy)."""
    if len(text) <= SLICE // 4:
        return (_h(text),)
    return (_h(part) for part in slices(text, size=SLICE // 4))


def _isolated(text: Any) -> str:
    """Escaped text in ``<bdi>``: right-to-left overrides inside it stop at its end."""
    return f"<bdi>{_h(text)}</bdi>"


_ROLE_CLASS = re.compile(r"[^a-z]")


class HtmlWriter(_Transcript):
    def begin(self, format_name: str, title: str = "", *, columns: bool = False) -> None:
        super().begin(format_name, title, columns=columns)
        page_title = title or "fluxgui export"
        self._put(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            "<meta name=\"referrer\" content=\"no-referrer\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_h(page_title)}</title><style>{CSS}</style></head>\n<body><main>"
            f"<h1>{_h(page_title)}</h1>\n"
        )
        self._open = False

    def session(self, info: SessionInfo) -> None:
        self._close_session()
        self.sessions += 1
        self._put(
            f"<section><h2>Session {_isolated(info.id)}</h2><p class=\"when\">{_h(self._when(info))}</p>\n"
        )
        self._open = True

    def notes(self, lines: list[str], record: dict[str, Any] | None = None) -> None:
        if lines:
            self._put("<div class=\"review\">" + "".join(f"<p>{_h(line)}</p>" for line in lines) + "</div>\n")

    def _close_session(self) -> None:
        if self._open:
            self._put("</section>\n")
            self._open = False

    def _message(self, m: Message, big: bool) -> Iterator[str]:
        role_class = _ROLE_CLASS.sub("", m.role.lower())[:20] or "unknown"
        kind = f"<span class=\"kind\">{_h(m.kind.replace('_', ' '))}</span>" if m.kind != "message" else ""
        when = f" · {_h(m.created_at)}" if m.created_at else ""
        yield f"<article class=\"{role_class}\"><header><b>{_isolated(m.role)}</b>{kind}{when} · {_h(m.label)}</header>"
        if m.kind == "tool_call":
            name, args = _call_parts(m)
            yield f"<div>Tool call <code>{_isolated(name)}</code></div><pre>"
            yield from _h_all(_pretty_json_text(args)[0])
            yield "</pre>"
        elif m.kind == "compaction":
            yield f"<div class=\"text\"><i>Compacted history: {_h(compaction_summary(m))} (opaque).</i></div>"
        elif m.kind in ("tool_output", "other"):
            yield "<pre>"
            yield from _h_all(_pretty_json_text(m.text)[0])
            yield "</pre>"
        else:
            yield "<div class=\"text\">"
            yield from _h_all(m.text)
            yield "</div>"
        meta = self._metadata_source(m, big)
        if meta is not None:
            yield "<details><summary>metadata</summary><pre>"
            for piece in meta[0]():
                yield from _h_all(piece)
            yield "</pre></details>"
        yield "</article>\n"

    def end(self) -> None:
        self._close_session()
        self._put("</main></body></html>\n")
        self._flush()


WRITERS: dict[str, type[ExportWriter]] = {
    "json": JsonWriter,
    "jsonl": JsonlWriter,
    "md": MarkdownWriter,
    "html": HtmlWriter,
}


def make_writer(fmt: str, out: TextIO, *, metadata: bool = True) -> ExportWriter:
    try:
        cls = WRITERS[fmt]
    except KeyError:
        raise ValueError(f"unknown export format {fmt!r} (use {', '.join(EXPORT_FORMATS)})") from None
    return cls(out, metadata=metadata)
