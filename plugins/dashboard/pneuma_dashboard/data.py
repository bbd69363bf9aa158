"""The dashboard's data files, read as the page reads them (docs/dashboard.md,
"Data formats"): ``data/*.csv`` (a header row, comma-separated) and
``data/*.json`` (an array of row objects).

Each field gets the type vega's loader gives it with ``parse: "auto"``: the
first of boolean, integer, number, date that every value passes, else
string (vega-loader's ``inferType``: an empty cell passes the number tests,
as ``+""`` is 0 there). Dates are the formats people write in data files
(ISO 8601 dates and times, ``2024/03/01``, ``Mar 1 2024``, ``1 March
2024``); Chromium's ``Date.parse`` takes more, so a column of odd date
strings may be a date to the page and a string here.

Files are read through the workspace sandbox and bounded: a file over
``max_data_bytes()`` is ``E_TOO_LARGE`` naming its size, never read into
memory whole.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pneuma.api import Sandbox, ToolError

SUFFIXES = (".csv", ".json")
DEFAULT_MAX_MB = 16
SAMPLE_ROWS = 5

_JS_NUMBER = re.compile(r"^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|Infinity)$|^0[xX][0-9a-fA-F]+$"
                        r"|^0[bB][01]+$|^0[oO][0-7]+$")
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATES = [re.compile(p, re.I) for p in (
    r"^\d{4}(?:-\d{2}(?:-\d{2})?)?(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$",
    r"^\d{4}/\d{1,2}/\d{1,2}(?: \d{1,2}:\d{2}(?::\d{2})?)?$",
    r"^\d{1,2}/\d{1,2}/\d{4}$",
    rf"^{_MONTHS} \d{{1,2}},? \d{{4}}$",
    rf"^\d{{1,2}} {_MONTHS},? \d{{4}}$",
    rf"^{_MONTHS} \d{{4}}$",
)]


def max_data_bytes() -> int:
    """The largest data file read (``PNEUMA_DASHBOARD_MAX_DATA_MB``, 16 MB by default)."""
    try:
        limit_mb = float(os.environ.get("PNEUMA_DASHBOARD_MAX_DATA_MB", DEFAULT_MAX_MB))
    except ValueError:
        limit_mb = DEFAULT_MAX_MB
    return int(limit_mb * 1024 * 1024)


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # boolean, integer, number, date, string (vega's names)


@dataclass(frozen=True)
class DataTable:
    """One data file read: its rows (values as the file has them: strings
    for CSV), its fields in file order with their types, and its size."""

    path: str
    rows: Sequence[Mapping[str, Any]]
    fields: Sequence[Field]
    bytes: int

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def describe(self, sample: int = SAMPLE_ROWS) -> dict[str, Any]:
        """What ``describe_data`` answers: fields, types, row count, a few rows."""
        types = {f.name: f.type for f in self.fields}
        return {"file": self.path, "rows": len(self.rows), "bytes": self.bytes,
                "fields": [{"name": f.name, "type": f.type} for f in self.fields],
                "sample": [{k: typed(v, types.get(k, "string")) for k, v in r.items()} for r in self.rows[:sample]]}


def load_data(sandbox: Sandbox, path: str) -> DataTable:
    """The data file ``path`` (workspace-relative) read through ``sandbox``.
    Errors are ``ToolError``\\ s: E_DENY_PATH, E_NOT_FOUND, E_TOO_LARGE,
    E_ENCODING, E_PARSE_FAIL, E_UNSUPPORTED (another format)."""
    canonical = sandbox.normalize(path)
    suffix = os.path.splitext(canonical)[1].lower()
    if suffix == ".parquet":
        # No small pinned Parquet reader here (docs/dashboard.md, "Data formats")
        raise ToolError("E_UNSUPPORTED", f"{canonical}: Parquet files are not read by the dashboard yet",
                        details={"path": canonical},
                        hint="Write the rows as CSV (a header row) or JSON (an array of row objects) under data/")
    if suffix not in SUFFIXES:
        raise ToolError("E_UNSUPPORTED", f"{canonical}: the dashboard reads {' and '.join(SUFFIXES)} data files, "
                        f"not {suffix or 'files without a suffix'}",
                        hint="Save the data as CSV (a header row) or JSON (an array of row objects)")
    limit = max_data_bytes()
    try:
        data, info = sandbox.read_bytes(canonical, limit)
    except (FileNotFoundError, NotADirectoryError):
        raise ToolError("E_NOT_FOUND", f"{canonical} does not exist", details={"path": canonical}) from None
    except IsADirectoryError:
        raise ToolError("E_NOT_FOUND", f"{canonical} is a directory, not a data file") from None
    if info.st_size > limit or len(data) > limit:
        size = max(info.st_size, len(data))
        raise ToolError("E_TOO_LARGE", f"{canonical} is {megabytes(size)}; the dashboard reads data files "
                        f"up to {megabytes(limit)}", details={"path": canonical, "bytes": size, "limit": limit},
                        hint="Aggregate or sample it into a smaller file under data/ and chart that")
    return parse_data(canonical, data)


def parse_data(path: str, data: bytes) -> DataTable:
    """``data`` read as the data file ``path`` (by its suffix)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ToolError("E_ENCODING", f"{path} is not UTF-8 text (byte {exc.start})",
                        hint="Save the file as UTF-8") from None
    if path.lower().endswith(".json"):
        rows = _json_rows(path, text)
        names = _names_in_order(rows)
    else:
        names, rows = _csv_rows(text)
    fields = [Field(name, infer_type(row.get(name) for row in rows)) for name in names]
    return DataTable(path, rows, fields, len(data))


def _json_rows(path: str, text: str) -> list[dict[str, Any]]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolError("E_PARSE_FAIL", f"{path} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
                        details={"path": path, "line": exc.lineno}) from None
    if not isinstance(value, list) or not all(isinstance(row, dict) for row in value):
        raise ToolError("E_PARSE_FAIL", f"{path} must hold an array of row objects ([{{\"month\": …, …}}, …])",
                        details={"path": path})
    return value


def _csv_rows(text: str) -> tuple[list[str], list[dict[str, Any]]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None) or []
    rows = []
    for record in reader:
        if not record:
            continue  # a blank line: d3-dsv gives no row for it either
        rows.append({name: (record[i] if i < len(record) else "") for i, name in enumerate(header)})
    return header, rows


def _names_in_order(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    return list(names)


def infer_type(values: Iterable[Any]) -> str:
    """The type vega's loader infers for a field with these values."""
    candidates = ["boolean", "integer", "number", "date"]
    for value in values:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue  # vega's isValid: null, undefined and NaN say nothing
        candidates = [c for c in candidates if _passes(c, value)]
        if not candidates:
            return "string"
    return candidates[0] if candidates else "string"


def typed(value: Any, kind: str) -> Any:
    """A CSV cell as the page holds it once typed: a number, a boolean, or
    the text (dates stay as written); an empty cell is null."""
    if not isinstance(value, str):
        return value
    if value == "":
        return None
    if kind in ("integer", "number"):
        number = _as_number(value)
        return int(number) if kind == "integer" and number is not None and math.isfinite(number) else number
    if kind == "boolean":
        return value == "true"
    return value


def _passes(kind: str, value: Any) -> bool:
    if kind == "boolean":
        return value in ("true", "false") or isinstance(value, bool)
    number = _as_number(value)
    if kind == "number":
        return number is not None
    if kind == "integer":
        return number is not None and math.isfinite(number) and number == int(number)
    return isinstance(value, str) and any(p.match(value.strip()) for p in _DATES)


def _as_number(value: Any) -> float | None:
    """JavaScript's ``+value``, or None where it is NaN."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text == "":
        return 0.0
    if not _JS_NUMBER.match(text):
        return None
    if text.lower().startswith(("0x", "0b", "0o")):
        return float(int(text, 0))
    return float(text.replace("Infinity", "inf"))


def megabytes(size: int) -> str:
    """A size as people read it (``2.0 MB``)."""
    return f"{size / (1024 * 1024):.1f} MB"
