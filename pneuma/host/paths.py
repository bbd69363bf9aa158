"""Where the host's own data files are, installed or from a checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # pneuma/


def templates_dir() -> Path:
    """The Jinja templates: inside the wheel at pneuma/_templates, or the
    repository's templates/ for an editable install."""
    bundled = _PACKAGE_DIR / "_templates"
    if bundled.is_dir():
        return bundled
    return _PACKAGE_DIR.parent / "templates"


def web_dir() -> Path:
    """The browser shell's static files."""
    return _PACKAGE_DIR / "web"
