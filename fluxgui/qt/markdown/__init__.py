"""Message bodies as QTextDocuments: Qt's Markdown, pygments colours, nothing loaded.

Message content is data: see :mod:`.documents` (the documents, :class:`SafeDocument`),
:mod:`.styling` (colours and images after Qt's Markdown parse), :mod:`.highlight`
(pygments tokens applied) and :mod:`.theme` (fonts and colours from the palette). What a
body shows is decided without Qt in :mod:`fluxgui.core.bodies`; code is lexed ahead in
a worker by :mod:`fluxgui.core.highlight`. Both are re-exported here for the pane.
"""

from fluxgui.core.bodies import (
    COLLAPSE_BYTES,
    PREVIEW_CHARS,
    PREVIEW_LINES,
    BodyPlan,
    body_plan,
    body_source,
    call_arguments,
    is_long,
    pretty_json,
    preview,
    utf8_size,
)
from fluxgui.core.highlight import (
    HIGHLIGHT_LIMIT,
    highlight_jobs,
    pretokenize,
    warm_up_pygments,
)

from .documents import (
    REFUSED,
    SafeDocument,
    code_document,
    markdown_document,
    message_document,
    new_document,
    plain_document,
    warm_up_qt,
)
from .theme import DocTheme

__all__ = [
    "COLLAPSE_BYTES",
    "HIGHLIGHT_LIMIT",
    "PREVIEW_CHARS",
    "PREVIEW_LINES",
    "REFUSED",
    "BodyPlan",
    "DocTheme",
    "SafeDocument",
    "body_plan",
    "body_source",
    "call_arguments",
    "code_document",
    "highlight_jobs",
    "is_long",
    "markdown_document",
    "message_document",
    "new_document",
    "plain_document",
    "pretokenize",
    "pretty_json",
    "preview",
    "utf8_size",
    "warm_up_pygments",
    "warm_up_qt",
]
