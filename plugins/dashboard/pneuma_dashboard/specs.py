"""A chart tile's Vega-Lite spec checked before the page draws it: against
the JSON schema of the pinned vega-lite package (copied beside the page's
bundle by ``npm run build`` in plugins/dashboard/web), and the fields it
encodes against the header of its data file.

Why the schema in Python rather than vega-lite's ``compile`` in Chromium:
compile accepts misspelt properties and an unknown channel with a console
warning and draws something else, where the schema names them; and it
answers in milliseconds without starting a browser (docs/dashboard.md,
"Checks"). What compile alone refuses (a field of a type the mark cannot
use) the page shows in the tile.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

STATIC = Path(__file__).resolve().parent / "static"
SCHEMA_FILE = STATIC / "vendor" / "vega-lite-schema.json"
# Keys whose object value is a sub-view with encodings of its own.
_VIEW_KEYS = ("layer", "hconcat", "vconcat", "concat", "spec")


class SchemaUnavailable(RuntimeError):
    """The schema file is missing: scripts/build-web has not run."""


@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema

    try:
        schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    except OSError:
        raise SchemaUnavailable(f"{SCHEMA_FILE.name} is missing: run scripts/build-web") from None
    validator_class = jsonschema.validators.validator_for(schema)
    return validator_class(schema)


def schema_errors(spec: Mapping[str, Any], limit: int = 3) -> list[tuple[str, str]]:
    """Up to ``limit`` schema errors of ``spec``: (path inside the spec,
    message). The spec is checked as the page draws it, with its data put
    in (the schema requires ``data`` of a top-level view)."""
    validator = _validator()
    found: list[tuple[str, str]] = []
    for error in validator.iter_errors({**spec, "data": {"values": []}}):
        for leaf in _leaves(error):
            for said in _said(leaf):
                if said not in found:
                    found.append(said)
    return found[:limit]


def _leaves(error: Any) -> list[Any]:
    """The errors that say what is wrong. An ``anyOf`` error (Vega-Lite's
    schema is made of them: a mark is one of several definitions, a spec
    one of several view kinds) stands for the branch that came nearest:
    the one with fewest errors saying the value is of another kind
    altogether (a wrong type, a required property of another kind of
    view), then the one whose errors reach deepest, then the fewest."""
    if error.validator not in ("anyOf", "oneOf") or not error.context:
        return [error]
    depth = len(error.absolute_path)
    branches: dict[Any, list[Any]] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)

    def distance(errors: list[Any]) -> tuple[int, int, int]:
        other_kind = sum(1 for e in errors if len(e.absolute_path) == depth and e.validator in _OTHER_KIND)
        return other_kind, -max(len(e.absolute_path) for e in errors), len(errors)

    nearest = min(branches.values(), key=distance)
    return [leaf for sub in nearest for leaf in _leaves(sub)]


# Errors that say a value is of another kind than the branch wants.
_OTHER_KIND = ("type", "const", "required", "anyOf", "oneOf")


def _said(error: Any) -> list[tuple[str, str]]:
    """(path, message) of one error, in words: an enum of forty marks or a
    whole sub-schema helps nobody."""
    path = _path(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
        known = error.schema.get("properties", {})
        return [(f"{path}.{name}", "is not a Vega-Lite property here (a typo?)")
                for name in error.instance if name not in known]
    if error.validator == "enum":
        options = ", ".join(json.dumps(o) for o in error.validator_value[:12])
        more = ", …" if len(error.validator_value) > 12 else ""
        return [(path, f"{json.dumps(error.instance)} is not one of {options}{more}")]
    if error.validator == "const":
        return [(path, f"{json.dumps(error.instance)} is not {json.dumps(error.validator_value)}")]
    message = str(error.message)
    return [(path, message if len(message) <= 160 else message[:159] + "…")]


def _path(parts: Sequence[Any]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def encoded_fields(spec: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(path inside the spec, field name) of every field the spec reads
    from its data: encodings of the view and its sub-views, and the fields
    transforms read."""
    yield from _fields_in(spec, "")


def _fields_in(view: Mapping[str, Any], path: str) -> Iterator[tuple[str, str]]:
    encoding = view.get("encoding")
    if isinstance(encoding, Mapping):
        for channel, definition in encoding.items():
            for n, item in enumerate(definition if isinstance(definition, list) else [definition]):
                where = f"{path}.encoding.{channel}" + (f"[{n}]" if isinstance(definition, list) else "")
                if isinstance(item, Mapping) and isinstance(item.get("field"), str):
                    yield f"{where}.field", item["field"]
    for key in _VIEW_KEYS:
        sub = view.get(key)
        if isinstance(sub, Mapping):
            yield from _fields_in(sub, f"{path}.{key}")
        elif isinstance(sub, list):
            for n, item in enumerate(sub):
                if isinstance(item, Mapping):
                    yield from _fields_in(item, f"{path}.{key}[{n}]")


def made_fields(spec: Any) -> set[str]:
    """Field names the spec's transforms and repeats make (``as``,
    aggregates' outputs, fold's key and value): a field encoded by one of
    these is not looked for in the data file."""
    made: set[str] = set()
    if isinstance(spec, Mapping):
        for key, value in spec.items():
            if key == "as":
                made.update(v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str))
            elif key == "fold":
                made.update(("key", "value"))
            made |= made_fields(value)
    elif isinstance(spec, list):
        for item in spec:
            made |= made_fields(item)
    return made


def data_field(name: str) -> str:
    """The data file's column a Vega-Lite field reads: ``a.b`` is field b
    of the object in column a, ``a\\.b`` is the column "a.b"."""
    head = re.split(r"(?<!\\)[.\[]", name, maxsplit=1)[0]
    return head.replace("\\.", ".").replace("\\[", "[")


def missing_fields(spec: Mapping[str, Any], columns: Sequence[str]) -> list[tuple[str, str]]:
    """(path, field) of each encoded field the data file lacks."""
    have = set(columns) | made_fields(spec)
    return [(path, name) for path, name in encoded_fields(spec)
            if data_field(name) not in have and name not in have]
