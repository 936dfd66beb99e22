"""CSV that a spreadsheet opens as data: every CSV fluxgui writes goes through
:func:`writer`.

A spreadsheet (Excel, LibreOffice, Google Sheets) reads a cell whose text starts with
``=``, ``+``, ``-`` or ``@`` — or with a tab or a carriage return before one — as a
formula: a note ``=HYPERLINK("http://evil…")`` written raw becomes a live link, a
``=WEBSERVICE(…)`` sends data away. As OWASP advises, such a cell is written with a
leading ``'`` (shown by the spreadsheet as the text, and read back by Python's ``csv``
module with the quote: plain text stays plain text). A number (``-3``, ``+1.5``) is no
formula and is written as it is.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import Any, TextIO

#: what a spreadsheet reads a cell starting with as a formula (OWASP's list)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def cell(value: Any) -> str:
    """``value`` as the text of a CSV cell no spreadsheet reads as a formula."""
    text = "" if value is None else str(value)
    if text.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


class SafeWriter:
    """``csv.writer`` whose every cell goes through :func:`cell`."""

    def __init__(self, out: TextIO, **options: Any) -> None:
        self._writer = csv.writer(out, **options)

    def writerow(self, row: Iterable[Any]) -> None:
        self._writer.writerow([cell(value) for value in row])


def writer(out: TextIO, **options: Any) -> SafeWriter:
    """A CSV writer onto ``out`` (``options`` as ``csv.writer`` takes them)."""
    return SafeWriter(out, **options)
