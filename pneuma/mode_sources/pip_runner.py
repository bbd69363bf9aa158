"""Run pip with the interpreter Pneuma runs in, and say its failures in plain words.

pip runs as ``sys.executable -m pip`` with an argument list (never a shell
string), so it installs into the very environment whose modes Pneuma loads.
Its output is read line by line: the lines that say what it is doing go to
``progress``; all of it is kept, and on failure written to a log file whose
path the one-line error names.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pneuma.core.errors import ToolError

Progress = Callable[[str], None]

# pip's own lines that say which step it is in, and the word the person sees.
_PHASES = (
    ("Cloning", "fetching"), ("Collecting", "collecting"), ("Processing", "collecting"),
    ("Obtaining", "collecting"), ("Resolved", "fetching"), ("Building wheel", "building"),
    ("Preparing metadata", "building"), ("Building editable", "building"),
    ("Created wheel", "building"), ("Installing collected", "installing"),
    ("Attempting uninstall", "installing"), ("Successfully installed", "installing"),
    ("Successfully uninstalled", "removing"), ("Found existing installation", "installing"),
)


@dataclass(frozen=True)
class PipRun:
    """What one pip command printed, and how it ended."""

    arguments: tuple[str, ...]
    returncode: int
    output: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def pip_environment() -> dict[str, str]:
    """pip's environment: the caller's (so PIP_* settings such as an index or
    offline options apply), without pip's version nagging or colour."""
    env = dict(os.environ)
    env.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    env["PIP_NO_COLOR"] = "1"
    env["PIP_NO_INPUT"] = "1"
    env["GIT_TERMINAL_PROMPT"] = "0"  # a private URL fails instead of asking for a password
    return env


def run_pip(arguments: Sequence[str], progress: Progress | None = None,
            timeout: float = 900.0) -> PipRun:
    """``python -m pip ARGUMENTS``, its lines streamed to ``progress`` as they come."""
    command = [sys.executable, "-m", "pip", *arguments]
    lines: list[str] = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, env=pip_environment(), text=True,
                          errors="replace") as process:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            phase = phase_of(line)
            if progress is not None and phase is not None:
                progress(f"{phase}: {line.strip()}")
        try:
            returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            returncode = process.wait()
    return PipRun(tuple(arguments), returncode, "\n".join(lines))


def phase_of(line: str) -> str | None:
    stripped = line.strip()
    for prefix, phase in _PHASES:
        if stripped.startswith(prefix):
            return phase
    return None


def failure(run: PipRun, what: str) -> ToolError:
    """One line saying why pip failed (the full output goes to a log file)."""
    log = _keep_log(run)
    output = run.output
    git_missing = re.search(r"(?:repository '?([^'\s]+)'? not found|'?([^'\s]+)'? does not appear "
                            r"to be a git repository)", output)
    if git_missing:
        url = git_missing.group(1) or git_missing.group(2)
        return ToolError("E_NOT_FOUND", f"git: repository not found: {url} ({what})",
                         details={"log": str(log)})
    unreachable = re.search(r"unable to access '([^']+)': (.+)", output)
    if unreachable:
        return ToolError("E_UNAVAILABLE", f"git: cannot reach {unreachable.group(1)}: "
                         f"{unreachable.group(2).strip()} ({what})", details={"log": str(log)})
    bad_ref = re.search(r"pathspec '([^']+)' did not match|Could not find (?:branch|ref) "
                        r"'?([^'\s]+)", output)
    if bad_ref:
        ref = bad_ref.group(1) or bad_ref.group(2)
        return ToolError("E_NOT_FOUND", f"git: no such tag, branch or commit: {ref} ({what})",
                         details={"log": str(log)})
    no_release = re.search(r"Could not find a version that satisfies the requirement (\S+)", output)
    if no_release:
        return ToolError("E_NOT_FOUND", f"no release of {no_release.group(1)} found on the "
                         f"package index (offline, misspelt, or not published) ({what})",
                         details={"log": str(log)})
    if re.search(r"subprocess-exited-with-error|Failed to build|metadata-generation-failed|"
                 r"Failed building", output):
        return ToolError("E_INSTALL_FAILED", f"build failed: {_meaningful_line(output)} (the "
                         f"last lines of the build log are in {log})", details={"log": str(log)})
    return ToolError("E_INSTALL_FAILED", f"pip failed: {_meaningful_line(output)} (the full "
                     f"output is in {log})", details={"log": str(log)})


def _meaningful_line(output: str) -> str:
    """The line of the build log that says most: the last error of the build
    itself, else pip's last ERROR line, else its last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    noise = ("note:", "hint:", "╰─>", "│", "[end of output]", "See above", "×", "error: subprocess",
             "error: metadata-generation", "ERROR: Failed to build", "ERROR: Failed building",
             "Failed to build", "ERROR: Could not build wheels", "ERROR: Failed building wheel")
    useful = [line for line in lines if not line.startswith(noise)]
    for line in reversed(useful):
        if re.search(r"(Error|error|ERROR)\b", line):
            return line.removeprefix("ERROR: ")[:300]
    return (useful or lines or ["(no output)"])[-1][:300]


def _keep_log(run: PipRun) -> Path:
    handle, name = tempfile.mkstemp(prefix="pneuma-mode-pip-", suffix=".log")
    with os.fdopen(handle, "w", encoding="utf-8") as log:
        log.write("$ pip " + " ".join(run.arguments) + "\n" + run.output + "\n")
    return Path(name)
