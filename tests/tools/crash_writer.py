"""Child process of test_crash_safety.py: writes through write_to_file
(dry run, then write) forever, cycling over files and versions."""

from __future__ import annotations

import sys
from pathlib import Path

import json  # noqa: E402

from pneuma.host.manifest import parse_manifest  # noqa: E402
from pneuma.host.modes import LoadedMode  # noqa: E402
from pneuma.tools.runtime import ToolRuntime  # noqa: E402

WEBGAL_PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "webgal" / "pneuma_webgal"


def load_mode(package: Path) -> LoadedMode:
    data = json.loads((package / "manifest.json").read_text(encoding="utf-8"))
    return LoadedMode(parse_manifest(data, "test"), package, "test", None, None)

FILES = ["game/scene/crash_a.txt", "game/scene/crash_b.txt"]


def version(path: str, number: int) -> str:
    body = "".join(f"{path} version {number} line {i}: 雪乃: " + "海风真舒服呢" * 30 + ";\n"
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
    runtime = ToolRuntime(load_mode(WEBGAL_PACKAGE), workspace, server_url="", server_token="")
    write_forever(runtime, start, lambda path, number: print("wrote", path, number, flush=True))


if __name__ == "__main__":
    main()
