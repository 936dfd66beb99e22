"""Eval datasets from recorded sessions: one item per assistant turn (the input the model
had, calls paired with outputs; the recorded answer as reference; session, turn, review
and store as metadata), in the formats promptfoo, OpenAI fine-tuning / evals, Langfuse
and LangSmith import, or generic JSONL.

* :mod:`.items` — a session's items, and the turns left out with why;
* :mod:`.formats` — each format's record;
* :mod:`.dataset` — choosing sessions (named, or by review), writing the file.
"""

from __future__ import annotations

from .dataset import EvalFilter, EvalResult, collect, export_eval
from .formats import EVAL_FORMATS, record, render
from .items import EvalItem, SessionItems, session_items

__all__ = [
    "EVAL_FORMATS", "EvalFilter", "EvalItem", "EvalResult", "SessionItems", "collect", "export_eval",
    "record", "render", "session_items",
]
