"""Export writers: sessions and their Messages as JSON, JSONL, Markdown or HTML.

Each writer streams: it is fed one session header and then pages of messages, and writes
to a text stream as it goes, so memory does not grow with the export. The caller owns the
file (see :mod:`fluxgui.services.transfer`, which writes atomically).

* **json** — ``{"fluxgui_export": 1, "format", "sessions": [{"id", "created_at",
  "updated_at", "messages": [Message, …]}, …]}``; round-trips through import.
* **jsonl** — one Message per line, with its ``session_id``; round-trips too.
* **md** — a readable transcript: roles, times, tool calls and outputs.
* **html** — one self-contained page: inline style only, no script, no external resource
  (a Content-Security-Policy forbids them too), every piece of content escaped; control
  characters (NUL…) shown as U+FFFD, ids and roles in ``<bdi>`` so that a right-to-left
  override in them stops there.
"""

from __future__ import annotations

import html
import json
import re
from abc import ABC, abstractmethod
from typing import Any, TextIO

from .model import Message, SessionInfo

EXPORT_FORMATS = ("json", "jsonl", "md", "html")
EXPORT_VERSION = 1
SUFFIXES = {"json": ".json", "jsonl": ".jsonl", "md": ".md", "html": ".html"}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def message_record(m: Message, *, metadata: bool = True, store_format: str = "") -> dict[str, Any]:
    """The exported form of a message; without ``metadata`` its metadata is left out
    (for a flux row whose metadata is not a JSON object, ``raw`` holds that text: it goes
    too)."""
    out = m.to_dict()
    if not metadata:
        out["metadata"] = None
        if store_format == "flux" and isinstance(m.raw, str):
            out["raw"] = None
    return out


class ExportWriter(ABC):
    """Writes an export to ``out``: ``begin``, then per session ``session`` and
    ``messages`` (any number of pages), then ``end``."""

    def __init__(self, out: TextIO, *, metadata: bool = True) -> None:
        self.out = out
        self.metadata = metadata
        self.store_format = ""
        self.title = ""
        self.sessions = 0
        self.messages_written = 0

    def begin(self, store_format: str, title: str = "") -> None:
        self.store_format = store_format
        self.title = title

    def _metadata_text(self, m: Message) -> str | None:
        """The message's metadata as readable text (``None``: none, or left out): its
        object as indented JSON, or a flux row's metadata text that is not an object."""
        if not self.metadata:
            return None
        if m.metadata:
            return json.dumps(m.metadata, indent=2, ensure_ascii=False)
        if self.store_format == "flux" and isinstance(m.raw, str):
            return m.raw
        return None

    @abstractmethod
    def session(self, info: SessionInfo) -> None: ...

    @abstractmethod
    def messages(self, page: list[Message]) -> None: ...

    def end_session(self) -> None:
        pass

    @abstractmethod
    def end(self) -> None: ...


class JsonWriter(ExportWriter):
    def begin(self, store_format: str, title: str = "") -> None:
        super().begin(store_format, title)
        self.out.write(
            f'{{"fluxgui_export": {EXPORT_VERSION}, "format": {_dumps(store_format)}, '
            '"sessions": ['
        )
        self._first_message = True

    def session(self, info: SessionInfo) -> None:
        head = info.to_dict()
        head.pop("messages", None)
        prefix = ",\n" if self.sessions else "\n"
        fields = ", ".join(f"{_dumps(k)}: {_dumps(v)}" for k, v in head.items())
        self.out.write(f'{prefix}{{{fields}, "messages": [')
        self.sessions += 1
        self._first_message = True

    def messages(self, page: list[Message]) -> None:
        parts = []
        for m in page:
            parts.append(("\n" if self._first_message else ",\n") + _dumps(
                message_record(m, metadata=self.metadata, store_format=self.store_format)
            ))
            self._first_message = False
        self.out.write("".join(parts))
        self.messages_written += len(page)

    def end_session(self) -> None:
        self.out.write("]}")

    def end(self) -> None:
        self.out.write("\n]}\n")


class JsonlWriter(ExportWriter):
    def session(self, info: SessionInfo) -> None:
        self._sid = info.id
        self.sessions += 1

    def messages(self, page: list[Message]) -> None:
        lines = []
        for m in page:
            record = {
                "session_id": self._sid,
                **message_record(m, metadata=self.metadata, store_format=self.store_format),
            }
            lines.append(_dumps(record) + "\n")
        self.out.write("".join(lines))
        self.messages_written += len(page)

    def end(self) -> None:
        pass


# --------------------------------------------------------------------------- Markdown


def _fence(text: str, lang: str = "") -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}\n"


def _pretty_json_text(text: str) -> tuple[str, str]:
    if text.lstrip()[:1] not in ("{", "["):  # most tool output is not JSON: skip the parse
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


def _md_inline(text: str) -> str:
    """Text safe inside a Markdown heading/emphasis line (no markup of its own)."""
    return re.sub(r"([\\`*_\[\]<>#|])", r"\\\1", " ".join(text.split()))


class MarkdownWriter(ExportWriter):
    def begin(self, store_format: str, title: str = "") -> None:
        super().begin(store_format, title)
        if title:
            self.out.write(f"# {_md_inline(title)}\n\n")

    def session(self, info: SessionInfo) -> None:
        self.sessions += 1
        sep = "\n---\n\n" if self.sessions > 1 else ""
        when = " · ".join(
            x for x in (
                f"{info.messages} message{'' if info.messages == 1 else 's'}",
                f"created {info.created_at}" if info.created_at else "",
                f"updated {info.updated_at}" if info.updated_at else "",
            ) if x
        )
        self.out.write(f"{sep}## Session {_md_inline(info.id)}\n\n_{when}_\n\n")

    def messages(self, page: list[Message]) -> None:
        parts = [self._message(m) for m in page]
        self.out.write("".join(parts))
        self.messages_written += len(page)

    def _message(self, m: Message) -> str:
        head = [f"**{_md_inline(m.role)}**"]
        if m.kind != "message":
            head.append(m.kind.replace("_", " "))
        if m.created_at:
            head.append(m.created_at)
        head.append(f"#{m.id}")
        out = [f"### {' · '.join(head)}\n\n"]
        if m.kind == "tool_call":
            name, args = _call_parts(m)
            body, lang = _pretty_json_text(args)
            out.append(f"Tool call `{name.replace('`', '')}`:\n\n{_fence(body, lang)}")
        elif m.kind == "tool_output":
            body, lang = _pretty_json_text(m.text)
            out.append(_fence(body, lang))
        elif m.kind == "reasoning":
            out.append("".join(f"> {line}\n" for line in m.text.splitlines() or [""]))
        elif m.kind == "other":
            out.append(_fence(m.text))
        else:
            out.append(m.text.rstrip("\n") + "\n")
        meta = self._metadata_text(m)
        if meta is not None:
            out.append("\n<details><summary>metadata</summary>\n\n")
            out.append(_fence(meta, "json" if m.metadata else ""))
            out.append("\n</details>\n")
        out.append("\n")
        return "".join(out)

    def end(self) -> None:
        pass


# --------------------------------------------------------------------------- HTML

_CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f6f7f9;color:#1d2126}
main{max-width:920px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 16px}
section{margin:0 0 32px}
h2{font-size:18px;margin:24px 0 4px;word-break:break-all}
.when{color:#5f6b7a;font-size:13px;margin:0 0 12px}
article{background:#fff;border:1px solid #dde1e6;border-left:4px solid #8a94a3;border-radius:6px;margin:0 0 10px;padding:8px 12px}
article.user{border-left-color:#2f6fde}
article.assistant{border-left-color:#1f9d55}
article.system,article.developer{border-left-color:#8e59c9}
article.tool{border-left-color:#d9822b}
article header{font-size:12px;color:#5f6b7a;margin:0 0 4px}
article header b{color:#1d2126;font-size:13px}
pre{white-space:pre-wrap;word-wrap:break-word;margin:0;font:13px/1.45 ui-monospace,Menlo,Consolas,monospace}
.text{white-space:pre-wrap;word-wrap:break-word}
.kind{background:#eef1f4;border-radius:3px;padding:0 5px;margin-left:6px}
details{margin-top:6px;font-size:12px}
@media (prefers-color-scheme:dark){body{background:#16181c;color:#e3e6ea}article{background:#1f2328;border-color:#343a42}
article header b{color:#e3e6ea}.kind{background:#2c3138}}
"""
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'"


#: control characters HTML does not allow in text (NUL among them): shown as U+FFFD
_HTML_CONTROLS = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f]")


def _h(text: Any) -> str:
    return _HTML_CONTROLS.sub("\ufffd", html.escape(str(text), quote=True))


def _isolated(text: Any) -> str:
    """Escaped text in ``<bdi>``: right-to-left overrides inside it stop at its end."""
    return f"<bdi>{_h(text)}</bdi>"


_ROLE_CLASS = re.compile(r"[^a-z]")


class HtmlWriter(ExportWriter):
    def begin(self, store_format: str, title: str = "") -> None:
        super().begin(store_format, title)
        page_title = title or "fluxgui export"
        self.out.write(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_CSP}\">"
            "<meta name=\"referrer\" content=\"no-referrer\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_h(page_title)}</title><style>{_CSS}</style></head>\n<body><main>"
            f"<h1>{_h(page_title)}</h1>\n"
        )
        self._open = False

    def session(self, info: SessionInfo) -> None:
        self._close_session()
        self.sessions += 1
        when = " · ".join(
            x for x in (
                f"{info.messages} message{'' if info.messages == 1 else 's'}",
                f"created {info.created_at}" if info.created_at else "",
                f"updated {info.updated_at}" if info.updated_at else "",
            ) if x
        )
        self.out.write(
            f"<section><h2>Session {_isolated(info.id)}</h2><p class=\"when\">{_h(when)}</p>\n"
        )
        self._open = True

    def _close_session(self) -> None:
        if self._open:
            self.out.write("</section>\n")
            self._open = False

    def messages(self, page: list[Message]) -> None:
        self.out.write("".join(self._message(m) for m in page))
        self.messages_written += len(page)

    def _message(self, m: Message) -> str:
        role_class = _ROLE_CLASS.sub("", m.role.lower())[:20] or "unknown"
        kind = f"<span class=\"kind\">{_h(m.kind.replace('_', ' '))}</span>" if m.kind != "message" else ""
        when = f" · {_h(m.created_at)}" if m.created_at else ""
        head = f"<header><b>{_isolated(m.role)}</b>{kind}{when} · #{_h(m.id)}</header>"
        if m.kind == "tool_call":
            name, args = _call_parts(m)
            body_text, _lang = _pretty_json_text(args)
            body = f"<div>Tool call <code>{_isolated(name)}</code></div><pre>{_h(body_text)}</pre>"
        elif m.kind in ("tool_output", "other"):
            body_text, _lang = _pretty_json_text(m.text)
            body = f"<pre>{_h(body_text)}</pre>"
        else:
            body = f"<div class=\"text\">{_h(m.text)}</div>"
        meta = ""
        meta_text = self._metadata_text(m)
        if meta_text is not None:
            meta = f"<details><summary>metadata</summary><pre>{_h(meta_text)}</pre></details>"
        return f"<article class=\"{role_class}\">{head}{body}{meta}</article>\n"

    def end(self) -> None:
        self._close_session()
        self.out.write("</main></body></html>\n")


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
