"""CSV cells no spreadsheet runs (issue 33.10): each character OWASP names, read back by
Python's csv module with the leading quote; numbers and plain text as they are; and every
CSV writer of the package goes through :mod:`fluxgui.core.csvcells`."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from fluxgui.core import csvcells

PACKAGE = Path(__file__).resolve().parents[2] / "fluxgui"


def _round_trip(row: list[object]) -> list[str]:
    out = io.StringIO(newline="")
    csvcells.writer(out).writerow(row)
    [back] = list(csv.reader(io.StringIO(out.getvalue(), newline="")))
    return back


def test_each_formula_start_is_neutralised_and_read_back_as_text() -> None:
    hostile = ['=HYPERLINK("http://evil.example","x")', "+1+cmd|' /C calc'!A0", "-2+3+cmd|'/C calc'!A0",
               "@SUM(A1:A9)", "\t=1+1", "\r=1+1"]
    assert _round_trip(hostile) == ["'" + cell for cell in hostile]


def test_numbers_text_and_empty_cells_are_written_as_they_are() -> None:
    plain = ["-3", "+1.5", "-.5", "1e-3", "", "refund", "a=b", " =1", "'quoted", None, 4, True]
    assert _round_trip(plain) == ["-3", "+1.5", "-.5", "1e-3", "", "refund", "a=b", " =1", "'quoted", "", "4", "True"]


def test_every_csv_writer_of_the_package_goes_through_csvcells() -> None:
    writes = re.compile(r"\bcsv\.(writer|DictWriter)\(|\bimport csv\b|\bfrom csv import\b")
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name != "csvcells.py" and writes.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
