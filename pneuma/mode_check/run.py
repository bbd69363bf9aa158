"""Running the checks: ``check_mode`` (what ``pneuma.api`` exports) runs them
in a child process, ``run_checks`` is that child's work.

A child process because a mode just installed is visible only to a fresh
interpreter (entry points are read once per process), a folder target puts
its root on ``sys.path``, and the browser checks start a server and a
Chromium: none of that should stay behind in the caller (the launcher, or
``install_mode`` right after pip).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Collection
from pathlib import Path

from pneuma.core.errors import ToolError
from pneuma.mode_check.report import CheckResult, ModeCheckReport
from pneuma.mode_check.target import ModeTarget, resolve

STATIC_CHECKS = ("manifest", "imports", "locales")
BROWSER_CHECKS = ("mount", "actions", "selection", "annotate", "edit", "exports", "a11y")
CHECKS = STATIC_CHECKS + BROWSER_CHECKS
DEFAULT_TIMEOUT = 120.0


def chosen(only: Collection[str] | None) -> list[str]:
    """The checks to run, in their order; ToolError (E_BAD_ARGS) for an unknown name."""
    if not only:
        return list(CHECKS)
    unknown = sorted(set(only) - set(CHECKS))
    if unknown:
        raise ToolError("E_BAD_ARGS", f"unknown check(s): {', '.join(unknown)} "
                        f"(the checks are: {', '.join(CHECKS)})")
    return [name for name in CHECKS if name in only]


def check_mode(target: str | Path, *, only: Collection[str] | None = None,
               timeout: float = DEFAULT_TIMEOUT) -> ModeCheckReport:
    """Check the mode ``target`` names (an installed mode's name, or a folder
    holding a mode package) against the viewer contract, in a child process.

    Raises ToolError: E_BAD_ARGS (an unknown check), E_NOT_FOUND (no such
    mode or folder), E_TIMEOUT (the checks took longer than ``timeout``)."""
    names = chosen(only)
    if isinstance(target, Path) or Path(str(target)).is_dir():
        target = str(Path(target).expanduser().resolve())
    command = [sys.executable, "-m", "pneuma.mode_check", str(target), "--json",
               "--only", ",".join(names), "--timeout", str(timeout)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout + 15,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ToolError("E_TIMEOUT", f"checking '{target}' took longer than {timeout:.0f} s") from None
    try:
        data = json.loads(done.stdout)
    except ValueError:
        why = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ToolError("E_INTERNAL", f"the check of '{target}' stopped: {why}") from None
    if "error" in data:
        error = data["error"]
        raise ToolError(error.get("code", "E_INTERNAL"), error.get("message", "the check failed"))
    return ModeCheckReport.from_dict(data)


def run_checks(target: str | Path, only: Collection[str] | None = None,
               timeout: float = DEFAULT_TIMEOUT) -> ModeCheckReport:
    """Every chosen check, in this process (the child's work)."""
    names = chosen(only)
    mode = resolve(target)
    report = ModeCheckReport(mode.name)
    try:
        report.version = str(mode.raw_manifest().get("version"))
    except (OSError, ValueError, AttributeError):
        report.version = None
    for name in names:
        if name in STATIC_CHECKS:
            report.results.append(static_check(name, mode))
    browser = [name for name in names if name in BROWSER_CHECKS]
    if browser:
        manifest = report.result("manifest")
        if manifest is not None and not manifest.ok:
            report.results += [CheckResult(name, False, "not run: the manifest does not validate")
                               for name in browser]
        else:
            from pneuma.mode_check.browser_run import run_browser_checks

            report.results += run_browser_checks(mode, browser, timeout)
    return report


def static_check(name: str, mode: ModeTarget) -> CheckResult:
    if name == "manifest":
        from pneuma.mode_check.manifest_check import check_manifest

        return check_manifest(mode)
    if name == "imports":
        from pneuma.mode_check.imports import check_imports

        return check_imports(mode.root, mode.python_files())
    from pneuma.mode_check.locales import check_locales

    try:
        manifest = mode.raw_manifest()
    except (OSError, ValueError) as exc:
        return CheckResult("locales", False, f"manifest.json cannot be read: {exc}")
    static = manifest.get("viewer", {}).get("staticDir", "static") if isinstance(manifest, dict) else "static"
    return check_locales(manifest if isinstance(manifest, dict) else {}, mode.package_dir / static)
