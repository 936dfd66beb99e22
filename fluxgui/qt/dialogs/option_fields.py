"""Form fields for the options a store kind declares (:data:`fluxgui.adapters.registry.OPTIONS`).

Each :class:`~fluxgui.core.ports.OptionSpec` becomes one row of a ``QFormLayout``: its
label, its help as the tooltip, a line edit (digits only for an ``int`` option, hidden
echo for a secret one). The rows of the kinds the form is not set to are hidden; what
the visible rows hold becomes the fields of an :class:`~fluxgui.core.ports.OpenOptions`.
Adding an option to the registry adds it to the Open URL form — no widget code.
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtGui import QIntValidator
from PySide6.QtWidgets import QFormLayout, QLabel, QLineEdit, QWidget

from fluxgui.adapters.registry import DEFAULT_PREFIX, OPTIONS, PUBLIC_BASE_URL
from fluxgui.core.ports import OptionSpec

#: options the Open URL form leaves to the Key dialog: the encryption key (and the TTL
#: that goes with it) is asked for once the opened store says it holds encrypted items,
#: and lives in the window's memory only — never in a form the user may leave open
KEY_OPTIONS = frozenset({"key", "ttl"})
#: options of the command line only (the window adds conversations one by one instead)
CLI_ONLY = frozenset({"ids_file"})
#: what an empty field means, for fields that start empty
PLACEHOLDERS: dict[str, str] = {
    "base_url": f"{PUBLIC_BASE_URL} (or $OPENAI_BASE_URL) when empty",
    "api_key": "from $OPENAI_API_KEY or the system keyring when empty",
    "conversations": "conv_… (several: separated by spaces or commas)",
}
#: what an empty field means, shown in it when the declaration's default is ``None``
#: ("the store's own default")
SHOWN_DEFAULTS: dict[str, str] = {"key_prefix": DEFAULT_PREFIX}
#: placeholder of a field whose empty value lets the store find the value itself
DETECTED = "found in the database when empty"


def form_options(
    kinds: tuple[str, ...] = ("sql", "redis", "conversations"),
) -> tuple[OptionSpec, ...]:
    """The declared options of these store kinds that the Open URL form asks for."""
    return tuple(
        spec for spec in OPTIONS
        if spec.name not in KEY_OPTIONS | CLI_ONLY and any(kind in spec.kinds for kind in kinds)
    )


def _with_mnemonic(label: str, taken: set[str]) -> str:
    """``label`` with an ``&`` before its first letter no other row of the form uses."""
    for i, ch in enumerate(label):
        if ch.isalpha() and ch.lower() not in taken:
            taken.add(ch.lower())
            return f"{label[:i]}&{label[i:]}"
    return label


class OptionFields:
    """The rows of ``form`` for the declared options of an Open dialog; ``taken`` are
    the mnemonic letters the form's other rows already use."""

    def __init__(
        self,
        parent: QWidget,
        form: QFormLayout,
        specs: tuple[OptionSpec, ...],
        *,
        taken: set[str] | None = None,
    ) -> None:
        self._form = form
        self.specs = specs
        self.edits: dict[str, QLineEdit] = {}
        letters = set(taken or ())
        for spec in specs:
            shown = SHOWN_DEFAULTS.get(spec.name)
            initial = shown if spec.default is None else str(spec.default)
            edit = QLineEdit(initial or "", parent)
            edit.setPlaceholderText(PLACEHOLDERS.get(spec.name) or initial or DETECTED)
            edit.setToolTip(spec.help[:1].upper() + spec.help[1:] + ".")
            if spec.type is int:
                edit.setValidator(QIntValidator(0, 2**31 - 1, edit))
            if spec.secret:
                edit.setEchoMode(QLineEdit.EchoMode.Password)
            form.addRow(_with_mnemonic(spec.label, letters) + ":", edit)
            label = form.labelForField(edit)
            if isinstance(label, QLabel):
                label.setBuddy(edit)
            self.edits[spec.name] = edit

    def show_kind(self, kind: str) -> None:
        """Show the rows of the options ``kind`` takes, hide the others."""
        for spec in self.specs:
            self._form.setRowVisible(self.edits[spec.name], kind in spec.kinds)

    def text(self, name: str) -> str:
        return self.edits[name].text().strip()

    def set_text(self, name: str, text: str | None) -> None:
        """Fill a field (``None``: what it shows by default)."""
        edit = self.edits[name]
        if text is None:
            spec = next(s for s in self.specs if s.name == name)
            text = SHOWN_DEFAULTS.get(name) if spec.default is None else str(spec.default)
        edit.setText(text or "")

    def problem(self, kind: str) -> str | None:
        """A number field of ``kind`` that does not hold a number, in one sentence."""
        for spec in self.specs:
            text = self.text(spec.name)
            if kind in spec.kinds and spec.type is int and text and not text.isdigit():
                return f"{spec.label} is a number."
        return None

    def values(self, kind: str) -> dict[str, Any]:
        """The :class:`~fluxgui.core.ports.OpenOptions` fields the rows of ``kind`` set
        (an empty field: the declaration's default)."""
        out: dict[str, Any] = {}
        for spec in self.specs:
            if kind not in spec.kinds:
                continue
            text = self.text(spec.name)
            if not text:
                if spec.default is not None:
                    out[spec.name] = spec.default
                continue
            if spec.repeat:  # several values in one field
                out[spec.name] = tuple(v for v in re.split(r"[\s,]+", text) if v)
            else:
                out[spec.name] = int(text) if spec.type is int else text
        return out
