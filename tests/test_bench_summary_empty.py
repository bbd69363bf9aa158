"""run_all's summary prints even when every benchmark failed (issue 25, item 21)."""

import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def test_summary_table_with_no_rows_prints_headers() -> None:
    code = "import sys; sys.path.insert(0, sys.argv[1]); from _common import print_rows; print_rows([])"
    done = subprocess.run([sys.executable, "-c", code, str(BENCHMARKS)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "figure" in done.stdout and "status" in done.stdout
