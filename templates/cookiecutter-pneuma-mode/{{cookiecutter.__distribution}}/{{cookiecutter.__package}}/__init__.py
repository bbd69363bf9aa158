"""The {{ cookiecutter.name }} mode for Pneuma: manifest, skill, seed files, viewer, tools
and an export.

Pneuma finds this module through the entry point in pyproject.toml and calls
``register_modes`` once per process to learn which modes it provides, and
``register_exporters`` when ``pneuma export`` or the browser's Export menu
asks what the mode can be exported as, and ``register_change_describers``
when the chat or ``pneuma checkpoints show`` says what a turn changed. Everything it needs of Pneuma comes
from ``pneuma.api``, the one module whose names Pneuma promises to keep (see
Pneuma's docs/api.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pneuma.api import ModeSource, hookimpl

if TYPE_CHECKING:  # only for the annotations: the exporter and describer load when asked for
    from pneuma.api import ChangeDescriber, Exporter

PACKAGE_DIR = Path(__file__).resolve().parent


@hookimpl
def register_modes() -> list[ModeSource]:
    # Relative paths in the manifest (skill/, seeds/, static/) are resolved
    # against package_dir.
    return [ModeSource(manifest=PACKAGE_DIR / "manifest.json", package_dir=PACKAGE_DIR)]


@hookimpl
def register_exporters() -> list[Exporter]:
    # Imported here, not at the top: Pneuma asks every plugin each time the
    # Export menu opens, and a mode that is not being exported should cost nothing.
    from {{ cookiecutter.__package }}.export import EXPORTER

    return [EXPORTER]


@hookimpl
def register_change_describers() -> list[ChangeDescriber]:
    # What a turn changed, in pages and sections rather than files (changes.py).
    from {{ cookiecutter.__package }}.changes import DESCRIBER

    return [DESCRIBER]
