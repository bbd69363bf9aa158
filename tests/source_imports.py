"""Reading import statements from source, for the tests of what may import
what (tests/test_architecture.py: no import cycles). The one implementation
is `pneuma mode check`'s (pneuma/mode_check/imports.py), which
tests/test_api.py also holds the built-in modes to."""

from __future__ import annotations

from pneuma.mode_check.imports import from_module

__all__ = ["from_module"]
