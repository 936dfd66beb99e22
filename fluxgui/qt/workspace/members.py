"""The stores the window holds (issue 36): a workspace of open stores, each with a short
label, one of them current (the store of the selected scope or session).

Qt-free bookkeeping for :class:`~fluxgui.qt.window.store_controller.StoreController`:
which stores an open joins or replaces, which ones to close, the labels (the file name,
told apart by parent folders, or one the user typed). The stores themselves are read
through :class:`fluxgui.services.workspace.Workspace` (:meth:`WindowWorkspace.service`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fluxgui.core.roles import Store
from fluxgui.services.workspace import Member, Workspace
from fluxgui.services.workspace.file import Entry
from fluxgui.services.workspace.labels import default_labels

from ..dialogs.opening import OpenedStore

#: how an open joins the workspace: it replaces every store (File › Open, as before a
#: workspace), the current one (a reopen: editing, a key), or is added
Joining = Literal["replace", "current", "add"]

#: the store tags' colours, by the store's place in the workspace
COLOURS = ("#2f7ed8", "#d9822b", "#3a9d5d", "#b5468b", "#7a5cc4", "#168c8c", "#8a6d3b")


@dataclass
class WindowMember:
    """One open store of the window: its label, how it was opened (memory only: it may
    hold a key) and the store."""

    label: str
    opened: OpenedStore
    store: Store
    #: the label was given (typed, a workspace file's): kept when stores join
    given: bool = False


class WindowWorkspace:
    """The window's open stores, in the order they were added."""

    def __init__(self) -> None:
        self.members: list[WindowMember] = []

    def __len__(self) -> int:
        return len(self.members)

    @property
    def labels(self) -> list[str]:
        return [m.label for m in self.members]

    def member_of(self, store: Store | None) -> WindowMember | None:
        return next((m for m in self.members if m.store is store), None)

    def member(self, label: str) -> WindowMember | None:
        return next((m for m in self.members if m.label == label), None)

    def store_with_target(self, target: str) -> Store | None:
        """The open store opened from ``target`` (the window's undo of its change)."""
        return next((m.store for m in self.members if m.store.target == target), None)

    def colour(self, label: str) -> str:
        labels = self.labels
        return COLOURS[labels.index(label) % len(COLOURS)] if label in labels else "#888888"

    def join(
        self, store: Store, opened: OpenedStore, how: Joining, current: Store | None,
        label: str | None = None,
    ) -> list[Store]:
        """``store`` has opened: it joins as ``how`` says; returns the stores to close."""
        here = self.member_of(current)
        if how == "current" and here is not None:
            here.store, here.opened = store, opened
            return [current] if current is not None and current is not store else []
        closing: list[Store] = []
        if how != "add" or not self.members:
            closing = [m.store for m in self.members if m.store is not store]
            if current is not None and current not in closing and current is not store:
                closing.append(current)
            self.members = []
        self.members.append(WindowMember(label or "", opened, store, given=label is not None))
        self.relabel()
        return closing

    def relabel(self) -> None:
        """The labels not given: file names told apart from each other (see labels.py)."""
        labels = default_labels([m.opened.target for m in self.members],
                                [m.label if m.given else None for m in self.members])
        for m, label in zip(self.members, labels):
            m.label = label

    def remove(self, label: str) -> WindowMember | None:
        gone = self.member(label)
        if gone is not None:
            self.members.remove(gone)
        return gone

    def rename(self, label: str, new: str) -> str | None:
        """Give a store another label; the reason when it cannot have it."""
        new = " ".join(new.split())
        if not new:
            return "a store's label cannot be empty"
        if new != label and new in self.labels:
            return f"another store is labelled {new!r}"
        member = self.member(label)
        if member is not None:
            member.label, member.given = new, True
        return None

    def service(self) -> Workspace:
        """The services' workspace over these stores (read by the merged list, timeline
        and consolidation)."""
        return Workspace([
            Member(m.label, m.opened.target, m.store, _kept(m.opened)) for m in self.members
        ])

    def entries(self) -> list[Entry]:
        """The workspace file's entries (no secret: see services/workspace/file.py)."""
        return [Entry(m.opened.target, m.label, _kept(m.opened)) for m in self.members]


def _kept(opened: OpenedStore) -> dict[str, object]:
    from fluxgui.services.workspace.file import KEPT_OPTIONS

    return {name: getattr(opened.options, name, None) for name in KEPT_OPTIONS}
