"""Where the bundled demo store lives (inside the wheel, or the repository's resources/)."""

from __future__ import annotations

import importlib.resources
from pathlib import Path


def demo_store_path() -> Path | None:
    """The bundled demo store: inside the installed package (a wheel ships
    ``fluxgui/resources``), else ``<repo>/resources`` of an editable install."""
    try:
        resource = importlib.resources.files("fluxgui") / "resources" / "demo.db"
        if resource.is_file():
            return Path(str(resource))
    except (ModuleNotFoundError, OSError, TypeError):
        pass
    import fluxgui

    repo_copy = Path(fluxgui.__file__).resolve().parent.parent / "resources" / "demo.db"
    return repo_copy if repo_copy.is_file() else None


def is_demo_store(path: Path) -> bool:
    """Whether ``path`` is the bundled demo store (which is never written to)."""
    demo = demo_store_path()
    try:
        return demo is not None and path.resolve() == demo.resolve()
    except OSError:
        return False
