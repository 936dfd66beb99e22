"""Moved: :mod:`fluxgui.qt.dialogs` (``open_url``, ``files``, ``passwords``, ``opening``).

This name stays importable while the other modules switch to the new ones.
"""

from fluxgui.services.database_urls import (  # noqa: F401 - re-exported
    DEFAULT_PORTS,
    POSTGRES,
    POSTGRES_ALIASES,
    REDIS,
    REDIS_SCHEMES,
    SQLITE,
    SQLITE_ALIASES,
)

from .dialogs.files import (  # noqa: F401 - re-exported
    ALL_FILTER,
    SQLITE_FILTER,
    FileDropFilter,
    local_paths_from_mime,
    make_file_dialog,
    make_folder_dialog,
    open_file_dialog,
    open_folder_dialog,
)
from .dialogs.open_url import DRIVERS, OpenUrlDialog  # noqa: F401 - re-exported
from .dialogs.opening import (  # noqa: F401 - re-exported
    OpenRequest,
    ask_password,
    ask_url,
    redis_label,
    remember_opened,
    request_for_stored,
)
from .dialogs.passwords import PasswordDialog, password_prompt  # noqa: F401 - re-exported
from .dialogs.url_view import UrlView  # noqa: F401 - re-exported
