"""Child process of test_crash_safety.py: writes through write_to_file
(dry run, then write) forever, cycling over files and versions, in a
workspace of the generic notes mode."""

from __future__ import annotations

import sys
from pathlib import Path

from tool_helpers import load_notes_mode

from pneuma.tools.runtime import ToolRuntime

FILES = ["notes/days/crash_a.md", "notes/days/crash_b.md"]


def version(path: str, number: int) -> str:
    # Multi-byte text, long enough that a torn write would show.
    body = "".join(f"{path} version {number} line {i}: " + "海风真舒服呢。" * 30 + "\n"
                   for i in range(400))
    return f"v{number}\n{body}END v{number}\n"


def write_forever(runtime: ToolRuntime, number: int, wrote) -> None:
    while True:
        for path in FILES:
            content = version(path, number)
            for dry in (True, False):
                result = runtime.call("write_to_file", {"path": path, "content": content,
                                                        "dryRun": dry,
                                                        "idempotencyKey": f"{path}-{number}"})
                if "error" in result:
                    print("ERROR", result, flush=True)
                    raise SystemExit(2)
            wrote(path, number)
        number += 1


def main() -> None:
    workspace, start = Path(sys.argv[1]), int(sys.argv[2])
    runtime = ToolRuntime(load_notes_mode(), workspace, server_url="", server_token="")
    write_forever(runtime, start, lambda path, number: print("wrote", path, number, flush=True))


if __name__ == "__main__":
    main()
