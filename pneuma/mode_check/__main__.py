"""``python -m pneuma.mode_check TARGET --json``: the child process of
``check_mode`` (pneuma/mode_check/run.py). Prints the report as JSON, or
``{"error": {code, message}}``; exit 0 either way (the caller reads the JSON)."""

from __future__ import annotations

import argparse
import json
import sys

from pneuma.core.errors import ToolError
from pneuma.mode_check.run import DEFAULT_TIMEOUT, run_checks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pneuma.mode_check")
    parser.add_argument("target")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", default="")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    args = parser.parse_args(argv)
    only = [name for name in args.only.split(",") if name]
    try:
        report = run_checks(args.target, only or None, args.timeout)
    except ToolError as exc:
        print(json.dumps({"error": {"code": exc.code, "message": exc.message}}))
        return 0
    print(report.to_json() if args.json else "\n".join(report.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
