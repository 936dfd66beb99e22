"""The workspace file: a small JSON document naming the stores of a workspace.

``{"stores": [{"target": …, "label": …, "options": {…}}]}`` — never a secret: a URL's
password and secret query values are taken out of its target before it is written
(:func:`fluxgui.core.redact.split_secrets`), and the options kept are the ones that say
*how* to open a store (tables, TTL, key prefix, format, …), never a key. When the file is
read, a password comes from the system keyring (as the window files it) and an
encryption key from the command's ``--key`` / ``FLUXGUI_KEY``, as today.

The file is written atomically: a temporary file beside it, flushed, then renamed over.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxgui.core.errors import TargetError, show_id
from fluxgui.core.ports import OpenOptions
from fluxgui.core.redact import split_secrets

#: the open options a workspace file keeps (how to open a store; no secret among them)
KEPT_OPTIONS = (
    "format", "sessions_table", "messages_table", "ttl", "key_prefix", "base_url",
    "conversations", "ids_file", "api_timeout",
)

#: a Conversations target (not a path)
_CONVERSATIONS = "openai-conversations:"


@dataclass
class Entry:
    """One store of a workspace as its file names it."""

    target: str
    label: str | None = None
    #: open options by their :class:`~fluxgui.core.ports.OpenOptions` name
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The entry as the file holds it: the target without its secrets, the kept
        options that were given."""
        options = {}
        defaults = OpenOptions()
        for name in KEPT_OPTIONS:
            value = self.options.get(name)
            if value in (None, (), []) or value == getattr(defaults, name):
                continue
            if name == "base_url" and isinstance(value, str):
                value = split_secrets(value)[0]
            options[name] = list(value) if isinstance(value, tuple) else value
        return {"target": bare_target(self.target), "label": self.label, "options": options}


def bare_target(target: str) -> str:
    """``target`` as a workspace file keeps it: a URL without its password and secret
    query values, a path made absolute (the file may be opened from anywhere else)."""
    if "://" in target:
        return split_secrets(target)[0]
    if target.startswith(_CONVERSATIONS):
        return target
    return str(Path(target).expanduser().absolute())


def save_workspace(path: Path, entries: list[Entry]) -> None:
    """Write ``entries`` to ``path`` atomically (the old file stays whole until the new
    one is complete)."""
    path = Path(path)
    doc = {"stores": [e.to_dict() for e in entries]}
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    folder = path.parent if str(path.parent) else Path(".")
    import tempfile  # (only a save needs it: a command that lists does not load it)

    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=folder)
    except OSError as exc:
        raise TargetError(f"cannot write {show_id(str(path))}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise TargetError(f"cannot write {show_id(str(path))}: {exc.strerror or exc}") from None


def load_workspace(path: Path) -> list[Entry]:
    """The entries of the workspace file at ``path`` (a relative path in it is taken from
    the file's folder); one line for a file that is not a workspace."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TargetError(f"cannot read workspace {show_id(str(path))}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise TargetError(f"workspace {show_id(str(path))} is not JSON: {exc}") from None
    stores = doc.get("stores") if isinstance(doc, dict) else None
    if not isinstance(stores, list):
        raise TargetError(f"workspace {show_id(str(path))} has no \"stores\" list")
    entries = []
    for n, item in enumerate(stores, 1):
        if not isinstance(item, dict) or not isinstance(item.get("target"), str) or not item["target"]:
            raise TargetError(f"workspace {show_id(str(path))}: store {n} names no target")
        label = item.get("label")
        options = item.get("options") or {}
        if not isinstance(options, dict):
            raise TargetError(f"workspace {show_id(str(path))}: store {n}'s options are not an object")
        target = item["target"]
        if "://" not in target and not target.startswith(_CONVERSATIONS) \
                and not Path(target).expanduser().is_absolute():
            target = str(path.parent / target)
        kept = {k: (tuple(v) if isinstance(v, list) else v) for k, v in options.items() if k in KEPT_OPTIONS}
        entries.append(Entry(target, label if isinstance(label, str) and label else None, kept))
    return entries
