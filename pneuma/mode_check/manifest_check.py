"""The `manifest` check: the manifest validates against the schema
`pneuma modes schema` prints, and the paths it names are in the package
(the same validation `pneuma run` applies when it loads the mode)."""

from __future__ import annotations

from pneuma.host.manifest import ManifestError
from pneuma.host.modes import ModeSource
from pneuma.host.registry import _load_one
from pneuma.mode_check.report import CheckResult
from pneuma.mode_check.target import ModeTarget


def check_manifest(target: ModeTarget) -> CheckResult:
    try:
        raw = target.raw_manifest()
    except FileNotFoundError:
        return CheckResult("manifest", False, f"{target.manifest_path} does not exist")
    except ValueError as exc:
        return CheckResult("manifest", False, f"manifest.json is not JSON: {exc}")
    try:
        mode = _load_one(ModeSource(manifest=raw, package_dir=target.package_dir), target.name, None)
    except ManifestError as exc:
        return CheckResult("manifest", False, f"{exc.problems[0]}"
                           + (f" (and {len(exc.problems) - 1} more)" if len(exc.problems) > 1 else ""),
                           {"problems": exc.problems})
    except (OSError, ValueError, TypeError) as exc:
        return CheckResult("manifest", False, str(exc))
    return CheckResult("manifest", True, f"manifest of '{mode.name}' {mode.manifest.version} validates")
