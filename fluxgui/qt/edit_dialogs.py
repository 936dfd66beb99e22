"""Moved: :mod:`fluxgui.qt.dialogs.confirm`, :mod:`fluxgui.qt.dialogs.message_edit` and
(the JSON helpers) :mod:`fluxgui.core.jsontext`.

This name stays importable while the other modules switch to the new ones (the window
imports the confirmations from here at call time, so tests may replace them here).
"""

from fluxgui.core.jsontext import (  # noqa: F401 - re-exported
    ID_LIMIT,
    JsonProblem,
    display_id,
    escape_hidden,
    json_text,
    parse_json,
)

from .dialogs.confirm import (  # noqa: F401 - re-exported
    clear_box,
    confirm_button,
    confirm_clear,
    confirm_delete_messages,
    confirm_delete_session,
    delete_messages_box,
    delete_session_box,
    run_confirm,
)
from .dialogs.message_edit import (  # noqa: F401 - re-exported
    CHECK_DELAY_MS,
    FLUX_ROLES,
    TEMPLATES,
    MessageEditDialog,
    edit_message,
)
