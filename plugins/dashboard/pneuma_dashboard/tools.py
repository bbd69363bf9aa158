"""The dashboard mode's agent tools (manifest "tools", served over MCP):
``validate_board`` and ``describe_data``.

Both read through the workspace sandbox and write nothing; they answer
from the same readers the check after every turn uses (validate.py), so
what the tool accepts is what the check accepts.
"""

from __future__ import annotations

from typing import Any

from pneuma.api import ToolContext
from pneuma_dashboard.data import SAMPLE_ROWS, load_data
from pneuma_dashboard.validate import validate_board as check_board


def validate_board(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """Every tile of dashboard.json: spec valid, data loads, fields exist,
    no overlap."""
    return check_board(ctx.sandbox).as_dict()


def describe_data(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """One data file's fields, their types, its row count and its first rows."""
    sample = int(args.get("rows", SAMPLE_ROWS))
    return load_data(ctx.sandbox, str(args["file"])).describe(sample=max(0, min(sample, 50)))
