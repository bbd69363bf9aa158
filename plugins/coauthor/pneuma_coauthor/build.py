"""Optional LaTeX build after an apply (docs/design/coauthor.md, "Build"): latexmk when it is installed.

A missing latexmk, a missing main.tex or ``latexmk = "off"`` is reported as
``skipped``, never as an error: the quality gate is advisory in V0.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

from pneuma_coauthor.domain.events import BuildChecked

_ERROR = re.compile(r"^(! .*|l\.\d+ .*|.*:\d+: .*|LaTeX Warning: (?:Reference|Citation) .* undefined.*)$", re.M)


def run_build(workspace: Path, *, mode: str = "auto", timeout: float = 180.0, patch_id: str | None = None) -> BuildChecked:
    if mode == "off":
        return BuildChecked(patch_id=patch_id, status="skipped", detail="build disabled in coauthor.toml")
    latexmk = shutil.which("latexmk")
    if latexmk is None:
        return BuildChecked(patch_id=patch_id, status="skipped", detail="latexmk is not installed")
    if not (workspace / "main.tex").is_file():
        return BuildChecked(patch_id=patch_id, status="skipped", tool="latexmk", detail="no main.tex")
    # The workspace's latexmkrc chooses the engine and the output folder;
    # without one, put the output in build/ so the sources stay clean.
    cmd = [latexmk, "-interaction=nonstopmode", "-halt-on-error", "-quiet"]
    if not (workspace / "latexmkrc").exists() and not (workspace / ".latexmkrc").exists():
        cmd += ["-pdf", "-outdir=build"]
    cmd.append("main.tex")
    start = time.monotonic()
    try:
        run = subprocess.run(cmd, cwd=workspace, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return BuildChecked(
            patch_id=patch_id, status="failed", tool="latexmk", duration_ms=int(timeout * 1000),
            detail=f"latexmk did not finish within {timeout:.0f} s",
        )
    duration = int((time.monotonic() - start) * 1000)
    if run.returncode == 0:
        return BuildChecked(patch_id=patch_id, status="ok", tool="latexmk", duration_ms=duration)
    output = run.stdout + run.stderr
    # latexmk -quiet keeps TeX's errors in the log; read it from where the build put it.
    for log in (workspace / "build/main.log", workspace / "out/main.log", workspace / "main.log"):
        if log.exists():
            output = log.read_text("latin-1") + "\n" + output
            break
    errors = _ERROR.findall(output)
    detail = "\n".join(m[0] if isinstance(m, tuple) else m for m in errors[:8]) or output[-1500:]
    return BuildChecked(patch_id=patch_id, status="failed", tool="latexmk", duration_ms=duration, detail=detail)
