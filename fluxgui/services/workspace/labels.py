"""Short labels for the stores of a workspace: what a row's Store column and a
message's store tag say.

A store is labelled by its file name (``conversations.db``); two stores whose file names
are alike are told apart by their parent folder (``a/conversations.db``,
``b/conversations.db``); a server store by its host and database (``db.example/agents``,
never a password). A label the user gives (``--store-label``) is kept as given.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath

from fluxgui.core.redact import split_secrets


def _parts(target: str) -> list[str]:
    """The pieces of ``target`` a label is made of, the most telling last."""
    if "://" in target:
        bare = split_secrets(target)[0]
        rest = bare.split("://", 1)[1].split("?", 1)[0].split("#", 1)[0]
        host_path = rest.rsplit("@", 1)[-1]
        return [p for p in host_path.split("/") if p] or [bare]
    parts = [p for p in PurePath(target.rstrip("/\\") or target).parts if p not in ("/", "\\")]
    return parts or [target]


def default_labels(targets: Sequence[str], given: Sequence[str | None] = ()) -> list[str]:
    """A label for each of ``targets``: the one ``given`` at its place (``None``: none
    given), else its file name, with as many parent folders as tell it apart from the
    others; a label still taken gets ``#2``, ``#3``, …"""
    parts = [_parts(t) for t in targets]
    chosen: list[str | None] = [
        given[i] if i < len(given) and given[i] else None for i in range(len(targets))
    ]
    depth = [1] * len(targets)
    while True:
        shown = [
            chosen[i] or "/".join(parts[i][-depth[i]:]) for i in range(len(targets))
        ]
        clash = False
        for i, label in enumerate(shown):
            same = [j for j, other in enumerate(shown) if other == label and j != i]
            if same and chosen[i] is None and depth[i] < len(parts[i]):
                depth[i] += 1
                clash = True
        if not clash:
            break
    out: list[str] = []
    for label in shown:
        final, n = label, 1
        while final in out:
            n += 1
            final = f"{label}#{n}"
        out.append(final)
    return out
