"""Reading files to import: fluxgui's JSON and JSONL exports, and the JSON session files of
HelloAgent's ``SessionStore`` (one session per file).

:func:`read_sessions` yields :class:`ImportSession` objects whose ``pages`` yield lists of
:class:`Message` (their ``id`` is the position in the file, not a store id). JSONL is read
line by line (bounded memory); a JSON file is parsed whole.
Every problem is an :class:`~fluxgui.core.errors.InvalidItem` naming the file (and line).
:func:`hello_message`, :func:`hello_problem` and :func:`hello_time` read HelloAgent history
entries for the importer and for the JSON session folder store (adapters.jsonfolder).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .errors import InvalidItem, TargetError
from .export import EXPORT_VERSION
from .model import KINDS, Message, from_item, item_kind

PAGE = 500
MIB = 1024 * 1024
#: the longest JSONL line read (bytes): a longer one is refused before it is read whole
#: (reading it takes a few times its size in memory; SQLite stores no value over 1 GB)
MAX_LINE = 256 * MIB
HELLO_ROLES = ("user", "assistant", "system", "tool", "summary")


@dataclass
class ImportSession:
    id: str
    created_at: str | None = None
    updated_at: str | None = None
    #: the messages, a page (list) at a time
    pages: Iterator[list[Message]] = field(default_factory=lambda: iter(()))
    #: where it came from (file name), for messages
    source: str = ""


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def message_from_record(record: Any, n: int, where: str) -> Message:
    """A Message from an exported record (``role``, ``kind``, ``text``, ``metadata``,
    ``created_at``, ``raw``)."""
    if not isinstance(record, dict):
        raise InvalidItem(f"{where}: a message must be a JSON object")
    raw = record.get("raw")
    # Any JSON value: a flux row's metadata may be a list or a string (as flux returns it).
    metadata = record.get("metadata")
    created = record.get("created_at")
    if created is not None and not isinstance(created, str):
        raise InvalidItem(f"{where}: \"created_at\" must be text or null")
    if "role" not in record and "text" not in record and isinstance(raw, dict):
        m = from_item(n, raw, created)
    else:
        role = record.get("role")
        if not isinstance(role, str) or not role:
            raise InvalidItem(f"{where}: a message needs a \"role\"")
        kind = record.get("kind") or (item_kind(raw) if isinstance(raw, dict) else "message")
        if kind not in KINDS:
            kind = "other"
        m = Message(id=n, role=role, kind=kind, text=_text(record.get("text", "")),
                    metadata=metadata, created_at=created, raw=raw)
    m.metadata = metadata
    return m


def _paged(messages: Iterator[Message]) -> Iterator[list[Message]]:
    page: list[Message] = []
    for m in messages:
        page.append(m)
        if len(page) >= PAGE:
            yield page
            page = []
    if page:
        yield page


def _load_json(path: Path) -> Any:
    try:
        with path.open("rb") as fh:
            return json.load(fh)
    except OSError as exc:
        raise TargetError(f"cannot read {path}: {exc.strerror or exc}") from None
    except RecursionError:
        raise InvalidItem(f"{path} is nested too deeply to read as JSON") from None
    except ValueError as exc:
        raise InvalidItem(f"{path} is not valid JSON ({str(exc).splitlines()[0]})") from None


def read_sessions(path: Path) -> Iterator[ImportSession]:
    """The sessions in an export or session file (the kind is told by its content)."""
    if path.is_dir():
        raise TargetError(f"{path} is a folder, not a file to import")
    if not path.exists():
        raise TargetError(f"no such file: {path}")
    if not path.is_file():
        raise TargetError(f"{path} is not a regular file (a device, a FIFO or a socket)")
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        yield from _read_jsonl(path)
        return
    data = _load_json(path)
    if isinstance(data, dict) and "fluxgui_export" in data:
        version = data["fluxgui_export"]
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise InvalidItem(f"{path}: \"fluxgui_export\" must be a version number")
        if version > EXPORT_VERSION:
            raise InvalidItem(
                f"{path} is a version {version} export: this fluxgui reads version "
                f"{EXPORT_VERSION} (a newer fluxgui made it)"
            )
        yield from _read_export(path, data)
    elif isinstance(data, dict) and isinstance(data.get("history"), list):
        yield _read_hello(path, data)
    else:
        raise InvalidItem(
            f"{path} is neither a fluxgui export nor a JSON session file "
            "(no \"fluxgui_export\" or \"history\")"
        )


def _read_export(path: Path, data: dict[str, Any]) -> Iterator[ImportSession]:
    sessions = data.get("sessions")
    if not isinstance(sessions, list):
        raise InvalidItem(f"{path}: \"sessions\" must be a list")
    for s_no, s in enumerate(sessions, 1):
        where = f"{path}, session {s_no}"
        if not isinstance(s, dict) or not isinstance(s.get("id"), str) or not s["id"]:
            raise InvalidItem(f"{where}: a session needs an \"id\" (text)")
        records = s.get("messages")
        if not isinstance(records, list):
            raise InvalidItem(f"{where}: \"messages\" must be a list")
        messages = (
            message_from_record(r, n, f"{where}, message {n}") for n, r in enumerate(records, 1)
        )
        yield ImportSession(
            s["id"],
            s.get("created_at") if isinstance(s.get("created_at"), str) else None,
            s.get("updated_at") if isinstance(s.get("updated_at"), str) else None,
            _paged(messages),
            path.name,
        )


def _read_jsonl(path: Path) -> Iterator[ImportSession]:
    """Consecutive lines of one session form one ImportSession (a session that shows up
    again later yields another one with the same id: the importer refuses it as a
    duplicate, or imports it under a new id when asked to rename)."""
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise TargetError(f"cannot read {path}: {exc.strerror or exc}") from None
    with fh:

        def records() -> Iterator[tuple[str, dict[str, Any], int]]:
            line_no = 0
            try:
                while data := fh.readline(MAX_LINE + 1):
                    line_no += 1
                    if len(data) > MAX_LINE and not data.endswith(b"\n"):
                        raise InvalidItem(
                            f"{path}, line {line_no}: longer than {MAX_LINE // MIB} MiB, the "
                            "longest line fluxgui imports"
                        )
                    found = _jsonl_record(path, line_no, data)
                    del data  # (its reader lets go of it once decoded)
                    yield from found
            except OSError as exc:
                raise TargetError(f"cannot read {path}: {exc.strerror or exc}") from None

        # groupby reads lazily and skips what a consumer left of a group.
        for sid, group in itertools.groupby(records(), key=lambda r: r[0]):
            messages = (
                message_from_record(rec, n, f"{path}, line {n}") for _sid, rec, n in group
            )
            yield ImportSession(sid, None, None, _paged(messages), path.name)


def _jsonl_record(
    path: Path, line_no: int, data: bytes
) -> Iterator[tuple[str, dict[str, Any], int]]:
    """The (session id, record, line number) of one line (nothing for a blank line)."""
    try:
        line = data.decode("utf-8-sig" if line_no == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidItem(
            f"{path}, line {line_no}: not UTF-8 text (byte {exc.start + 1})"
        ) from None
    del data  # a huge line is held once as bytes, then once as text, never both for long
    if not line or line.isspace():  # (not strip(): a copy of the whole line)
        return
    try:
        record = json.loads(line)
    except RecursionError:
        raise InvalidItem(f"{path}, line {line_no}: nested too deeply to read as JSON") from None
    except ValueError as exc:
        raise InvalidItem(
            f"{path}, line {line_no}: not valid JSON ({str(exc).splitlines()[0]})"
        ) from None
    del line  # only the record stays while it is imported
    sid = record.get("session_id") if isinstance(record, dict) else None
    if not isinstance(sid, str) or not sid:
        raise InvalidItem(f"{path}, line {line_no}: a line needs a \"session_id\" (text)")
    if record.keys() == {"session_id", "review"}:
        return  # a session's review (export --with-reviews), not a message
    yield sid, record, line_no


def hello_time(value: Any) -> str | None:
    """A HelloAgent time (local time, written without a zone) with this machine's zone,
    as ISO 8601; ``None`` when it is missing or unreadable."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        dt = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.astimezone()  # a naive time is taken as local time
    return dt.isoformat()


def hello_problem(entry: Any) -> str | None:
    """Why a HelloAgent history entry is not one its ``Message.from_dict`` reads
    (``None``: it is)."""
    if not isinstance(entry, dict):
        return "must be a JSON object"
    role = entry.get("role")
    if role not in HELLO_ROLES:
        return f"unknown role {role!r}"
    metadata = entry.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        return "\"metadata\" must be a JSON object"
    return None


def hello_message(n: int, entry: Any, *, strict_content: bool = False) -> Message:
    """The Message of history entry ``n`` (1-based) of a HelloAgent session file.

    Never raises: an entry :func:`hello_problem` refuses (or, with ``strict_content``,
    one whose ``content`` is not text) becomes ``kind="other"`` with its JSON text as
    ``text`` and ``raw``. Entries ``role: tool`` are tool outputs."""
    bad = hello_problem(entry) is not None or (
        strict_content and not isinstance(entry.get("content"), str)
    )
    if bad:
        raw = json.dumps(entry, ensure_ascii=False)
        role = entry.get("role") if isinstance(entry, dict) else None
        return Message(
            id=n,
            role=role if isinstance(role, str) and role else "unknown",
            kind="other",
            text=raw,
            created_at=hello_time(entry.get("timestamp")) if isinstance(entry, dict) else None,
            raw=raw,
            sort_key=(n,),
        )
    role = entry["role"]
    return Message(
        id=n,
        role=role,
        kind="tool_output" if role == "tool" else "message",
        text=_text(entry.get("content")),
        metadata=entry.get("metadata") or None,
        created_at=hello_time(entry.get("timestamp")),
        sort_key=(n,),
    )


def _read_hello(path: Path, data: dict[str, Any]) -> ImportSession:
    """A HelloAgent session file. Its ``session_id`` changes on every save, so the file
    name (without ``.json``) is the session id."""
    history = data["history"]

    def messages() -> Iterator[Message]:
        for n, entry in enumerate(history, 1):
            problem = hello_problem(entry)
            if problem is not None:
                raise InvalidItem(f"{path}, history entry {n}: {problem}")
            m = hello_message(n, entry)
            m.sort_key = ()  # a position in the file, not a store's key
            yield m

    return ImportSession(
        path.stem,
        hello_time(data.get("created_at")),
        hello_time(data.get("saved_at")),
        _paged(messages()),
        path.name,
    )
