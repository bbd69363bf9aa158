"""The coauthor mode's check after every turn (docs/checks.md): the paper's
LaTeX build (build.py's ``run_build``, the build CoAuthor runs after an
apply), each error with the file and line TeX names.

A check does not write to the workspace, so the build runs on a private
copy of the paper's sources (read through the sandbox, without Pneuma's,
the agent's and the build's own folders), and its output stays there. A
copy without a latexmkrc gets one that asks TeX for ``file:line: error``
lines (as the seed's latexmkrc does), so every error names its file. With
no LaTeX engine on the machine the check says it was skipped: that is not
a failure of the turn.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from pneuma.api import CheckRequest, Problem, Sandbox, ToolError, TurnCheck

# What a turn may change that the build reads.
SOURCE_SUFFIXES = (".tex", ".bib", ".sty", ".cls", ".bst", ".bbx", ".cbx")
RC_NAMES = ("latexmkrc", ".latexmkrc")
# Never the paper's: Pneuma's and the agent's state, version control, build output.
SKIPPED_DIRS = frozenset({".pneuma", ".claude", ".git", "node_modules", ".venv", "build", "out", "__pycache__"})
MAX_FILE_BYTES = 25 * 1024 * 1024
MAX_COPY_BYTES = 200 * 1024 * 1024
BUILD_SECONDS = 18.0  # within the runner's budget (docs/checks.md)
MAX_PROBLEMS = 10
# Written into a copy that has no latexmkrc of its own (build.py's default
# command, plus file:line:error lines).
DEFAULT_RC = ("$pdf_mode = 1;\n$out_dir = 'build';\n"
              "$pdflatex = 'pdflatex -interaction=nonstopmode -halt-on-error -file-line-error %O %S';\n")
_FILE_LINE = re.compile(r"^(?:\./)?([^\s:][^:]*\.(?:tex|sty|cls|bib|bbl|aux)):(\d+): (.+)$")
_TEX_ERROR = re.compile(r"^! (.+)$")
_TEX_LINE = re.compile(r"^l\.(\d+) ?(.*)$")


def touches_sources(changed: Sequence[str]) -> bool:
    return any(p.lower().endswith(SOURCE_SUFFIXES) or PurePosixPath(p).name in RC_NAMES for p in changed)


def check_build(workspace: Path, changed: Sequence[str], timeout: float = BUILD_SECONDS) -> list[Problem]:
    """The build's errors when the turn changed a source of the paper."""
    if not touches_sources(changed):
        return []
    if not (workspace / "main.tex").is_file():
        return []  # build.py builds main.tex: a workspace without one has no paper to build
    if shutil.which("latexmk") is None:  # before copying anything
        return [Problem("skipped: no LaTeX engine (latexmk is not installed)", severity="warning")]
    with tempfile.TemporaryDirectory(prefix="pneuma-coauthor-check-", ignore_cleanup_errors=True) as tmp:
        copy = Path(tmp)
        too_big = copy_sources(workspace, copy)
        if too_big:
            return [Problem(f"the LaTeX build was skipped: {too_big}", severity="warning")]
        if not any((copy / name).exists() for name in RC_NAMES):
            (copy / "latexmkrc").write_text(DEFAULT_RC, encoding="utf-8")
        status, detail = build_in_group(copy, timeout)
    if status == "skipped":
        return [Problem(f"skipped: no LaTeX engine ({detail})" if "not installed" in detail
                        else f"skipped: {detail}", severity="warning")]
    if status == "ok":
        return []
    if detail.startswith("latexmk did not finish"):
        # The check could not tell, which is not the paper's fault: the
        # runner reports it as the check's error, and no repair turn follows.
        raise RuntimeError(f"the LaTeX build check failed: {detail}")
    return problems_of_log(detail)


def build_in_group(copy: Path, timeout: float) -> tuple[str, str]:
    """build.py's ``run_build`` on ``copy``, in a process group of its own:
    when latexmk is stopped at its timeout, the TeX run it started would
    go on (a paper with a loop that never ends spins for good); the whole
    group is ended here once the build returns, so nothing outlives the
    check. Returns the build's (status, detail)."""
    process = subprocess.Popen([sys.executable, "-c", _BUILD_SCRIPT, str(copy), str(timeout)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout + 10)
    except subprocess.TimeoutExpired:
        out, err = "", ""
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        _wait_until_gone(process.pid)
    try:
        answer = json.loads(out.strip().splitlines()[-1])
        return str(answer["status"]), str(answer["detail"])
    except (IndexError, ValueError, KeyError, TypeError):
        if process.returncode == -signal.SIGKILL:
            return "failed", f"latexmk did not finish within {timeout:.0f} s"
        last = (err.strip().splitlines() or ["no answer"])[-1]
        raise RuntimeError(f"the LaTeX build check failed: {last}") from None


def _wait_until_gone(group: int, seconds: float = 2.0) -> None:
    """Wait (briefly) until no live process of ``group`` is left: a kill
    is delivered when the process next runs, and the copy they work in is
    removed next."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and _live_members(group):
        time.sleep(0.02)


def _live_members(group: int) -> bool:
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # "pid (name) state ppid pgrp ...": the name may hold spaces, so split after ")".
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(group) and fields[0] != "Z":
            return True
    return False


# Run by build_in_group in its own process (``python -c SCRIPT copy timeout``).
_BUILD_SCRIPT = """
import json, sys
from pathlib import Path
from pneuma_coauthor.build import run_build
result = run_build(Path(sys.argv[1]), timeout=float(sys.argv[2]))
print(json.dumps({"status": result.status, "detail": result.detail}))
"""


def copy_sources(workspace: Path, target: Path) -> str | None:
    """Copy the workspace's files (the paper and its figures) into
    ``target``; a reason when the paper is too big to copy, else None."""
    sandbox = Sandbox(workspace)
    total = 0
    for folder, dirs, files in os.walk(workspace):
        rel_folder = Path(folder).relative_to(workspace)
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not (d.startswith(".") and d != ".")]
        for name in files:
            rel = (rel_folder / name).as_posix()
            if not sandbox.is_allowed(rel):
                continue
            try:
                data, _ = sandbox.read_bytes(rel, MAX_FILE_BYTES)
            except (ToolError, OSError):
                continue  # a link out of the workspace, or gone: not the paper's
            if len(data) > MAX_FILE_BYTES:
                continue
            total += len(data)
            if total > MAX_COPY_BYTES:
                return f"the workspace holds over {MAX_COPY_BYTES // 2**20} MiB"
            out = target / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
    return None


def problems_of_log(detail: str) -> list[Problem]:
    """The build's error lines as problems: ``file:line: message`` lines
    each, else TeX's ``! message`` with the ``l.N`` line that follows it.
    Its warnings (undefined references) are left out: a build stopped by
    an error never reaches the pass that resolves them."""
    problems: list[Problem] = []
    pending: str | None = None
    for raw in detail.splitlines():
        line = raw.strip()
        found = _FILE_LINE.match(line)
        if found and found.group(3).strip().startswith("==> Fatal error"):
            continue  # TeX's sign-off after the error above, not another error
        if found:
            path, number, message = found.group(1), int(found.group(2)), found.group(3)
            problems.append(Problem(f"{path}, line {number}: {message}", file=path, line=number,
                                    locate={"file": path, "line": number}))
            pending = None
            continue
        if (error := _TEX_ERROR.match(line)) and not problems:
            pending = error.group(1)
        elif (where := _TEX_LINE.match(line)) and pending:
            problems.append(Problem(f"line {where.group(1)}: {pending} ({where.group(2).strip()[:80]})",
                                    line=int(where.group(1))))
            pending = None
    if pending:
        problems.append(Problem(f"the LaTeX build failed: {pending}"))
    if not problems:
        last = detail.strip().splitlines()[-1:] or ["no error line in its log"]
        problems.append(Problem(f"the LaTeX build failed: {last[0][:300]}"))
    return _unique(problems)[:MAX_PROBLEMS]


def _unique(problems: list[Problem]) -> list[Problem]:
    seen: set[str] = set()
    kept: list[Problem] = []
    for problem in problems:
        if problem.message not in seen:
            seen.add(problem.message)
            kept.append(problem)
    return kept


def _run(request: CheckRequest) -> list[Problem]:
    budget = getattr(request, "budget_s", BUILD_SECONDS + 2)
    return check_build(request.workspace, request.changed, max(2.0, min(BUILD_SECONDS, budget - 2)))


CHECKS = [TurnCheck(mode="coauthor", name="latex",
                    label={"en": "LaTeX build", "zh-CN": "LaTeX 编译"}, run=_run)]
