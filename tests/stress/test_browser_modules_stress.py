"""Issue 24, item 5 under stress: the browser's pure modules fed many seeded,
generated inputs by ``browser_modules_fuzz.mjs`` under ``node``. The shell's
store takes thousands of messages of every kind (a backend's among them, some
malformed) with the native backend's module attached through the store's
extension point: the backend's messages never reach the shell's own state and
the backend takes no shell message. Hostile Markdown through the chat's and a
viewer's markdown-it (the one pinned copy) never yields markup or a script
link. Backend modules broken in every way leave the page an empty slot."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.stress.tally import count, record

pytestmark = pytest.mark.stress

SCRIPT = Path(__file__).with_name("browser_modules_fuzz.mjs")
MESSAGES = 6000
TEXTS = 3000
MODULES = 400
SEEDS = (1, 24)
TIME_CAP = 40.0


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_browser_modules_hold_under_generated_input() -> None:
    started = time.monotonic()
    for seed in SEEDS:
        run = subprocess.run(
            ["node", "--experimental-default-type=module", str(SCRIPT),
             str(MESSAGES), str(TEXTS), str(MODULES), str(seed)],
            capture_output=True, text=True, timeout=TIME_CAP, check=False)
        assert run.returncode == 0, run.stderr[-2000:]
        result = json.loads(run.stdout.strip().splitlines()[-1])
        assert result["count"] == 0, result["problems"]
        assert set(result["taken"]) == {"browser_selection", "extension_update", "twin_update", "task_update"}
    seconds = time.monotonic() - started
    runs = len(SEEDS)
    record("24.5 browser modules",
           f"{count(MESSAGES * runs)} socket messages through the store with a backend's extension, "
           f"{count(TEXTS * runs * 2)} hostile Markdown renders, {count(MODULES * runs)} broken backend modules "
           f"in {seconds:.1f} s: 0 got through")
