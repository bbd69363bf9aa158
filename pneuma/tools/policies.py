"""Tool policies of every mode (docs/design/tool-contract.md, "Policies"): defaults, file, flags.

Precedence, lowest first: the host's defaults, the mode's own defaults
(``policies.json`` next to the mode's ``manifest.json``, same shape), the
policy file (``--policies FILE``, else ``W/.pneuma/<mode>-policies.json``),
then the command-line flags (``--enable-exec``, ``--enable-browser``).

A policy file has the tool contract's shape::

    {"contractVersion": "1.0.0", "mode": "cline", "policies": {...}}

(a bare ``{...}`` of policies is accepted too). Objects merge key by key;
everything else replaces.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from pneuma.core.errors import ToolError

CONTRACT_VERSION = "1.0.0"

DEFAULT_POLICIES: dict[str, Any] = {
    "sandboxRoot": "${projectRoot}",
    "forbiddenDirs": [".git", "node_modules", ".env"],
    "writeRequiresDiff": True,
    "maxAutoFix": 1,
    "batchMaxLines": 2000,
    "allowedCommands": ["dev", "build", "lint"],
    "browserAllowedHosts": ["localhost", "127.0.0.1"],
    "snapshotRetention": 50,
    "maxReadBytes": 5 * 1024 * 1024,
    "maxWriteBytes": 5 * 1024 * 1024,
    "maxListEntries": 5000,
    "textEncoding": "utf-8",
    "dryRunTtlSeconds": 24 * 3600,
    # Write confirmations (pneuma/tools/confirm.py): a dry run is shown in the
    # Pneuma page with Apply/Reject when one is connected, and the real write
    # waits this long for the person's decision.
    "confirmWrites": True,
    "confirmTimeoutMs": 300000,
    "execution": {
        "enabled": False,
        "timeoutMs": 30000,
        "redactEnv": ["*KEY*", "*TOKEN*", "*SECRET*", "*PASSWORD*", "*CREDENTIAL*"],
    },
    "browser": {
        "enabled": False,
        "timeoutMs": 15000,
        "screenshotDir": ".pneuma/screenshots",
    },
    # Tool names switched on (dev-only ones included) or off, beyond the manifest.
    "tools": {"enable": [], "disable": []},
}

# Dev-only tools switched on by a capability (flag or policy) rather than by name.
CAPABILITY_TOOLS: dict[str, tuple[str, ...]] = {
    "execution": ("execute_command",),
    "browser": ("browser_action",),
}

_TYPES: dict[str, tuple[type, ...]] = {
    "forbiddenDirs": (list,),
    "writeRequiresDiff": (bool,),
    "maxAutoFix": (int,),
    "batchMaxLines": (int,),
    "allowedCommands": (list,),
    "browserAllowedHosts": (list,),
    "snapshotRetention": (int,),
    "maxReadBytes": (int,),
    "maxWriteBytes": (int,),
    "maxListEntries": (int,),
    "dryRunTtlSeconds": (int, float),
    "confirmWrites": (bool,),
    "confirmTimeoutMs": (int, float),
    "execution": (dict,),
    "browser": (dict,),
    "tools": (dict,),
}


def policy_file_for(mode_name: str, workspace: Path) -> Path:
    return Path(workspace) / ".pneuma" / f"{mode_name}-policies.json"


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def read_policy_file(path: Path) -> dict[str, Any]:
    """The policies inside a policy file; E_PARSE_FAIL / E_BAD_ARGS if it is broken."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ToolError("E_NOT_FOUND", f"Policy file not found: {path}",
                        details={"policiesFile": str(path)}) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ToolError("E_PARSE_FAIL", f"Policy file {path} is not valid JSON: {exc}",
                        details={"policiesFile": str(path)},
                        hint="Fix the JSON or delete the file to use the defaults.") from None
    except OSError as exc:
        raise ToolError("E_IO", f"Cannot read policy file {path}: {exc}",
                        details={"policiesFile": str(path)}) from None
    if not isinstance(raw, dict):
        raise ToolError("E_BAD_ARGS", f"Policy file {path} must hold a JSON object",
                        details={"policiesFile": str(path), "field": "(root)"})
    policies = raw.get("policies", raw if "contractVersion" not in raw else {})
    if not isinstance(policies, dict):
        raise ToolError("E_BAD_ARGS", f"'policies' in {path} must be an object",
                        details={"policiesFile": str(path), "field": "policies"})
    check(policies, str(path))
    return policies


def check(policies: dict[str, Any], source: str) -> None:
    for key, types in _TYPES.items():
        if key not in policies:
            continue
        value = policies[key]
        if isinstance(value, bool) and bool not in types:
            ok = False
        else:
            ok = isinstance(value, types)
        if ok and isinstance(value, int) and not isinstance(value, bool) and value < 0:
            ok = False
        if not ok:
            raise ToolError("E_BAD_ARGS", f"policy '{key}' in {source} has the wrong type "
                            f"or value: {value!r}",
                            details={"policiesFile": source, "field": f"policies.{key}"})


def effective_policies(
    mode: Any,
    workspace: Path,
    *,
    policies_file: Path | str | None = None,
    enable_exec: bool = False,
    enable_browser: bool = False,
    overrides: dict[str, Any] | None = None,
) -> dict[str, Any]:
    policies = copy.deepcopy(DEFAULT_POLICIES)
    mode_defaults = Path(mode.package_dir) / "policies.json"
    if mode_defaults.is_file():
        policies = merge(policies, read_policy_file(mode_defaults))
    path = Path(policies_file) if policies_file else policy_file_for(mode.name, workspace)
    if policies_file or path.is_file():
        policies = merge(policies, read_policy_file(path))
    if overrides:
        policies = merge(policies, overrides)
    if enable_exec:
        policies["execution"]["enabled"] = True
    if enable_browser:
        policies["browser"]["enabled"] = True
    policies["projectRoot"] = str(Path(workspace).resolve())
    policies["contractVersion"] = CONTRACT_VERSION
    return policies


def tool_enabled(spec: Any, policies: dict[str, Any]) -> bool:
    """Whether a manifest ToolSpec is callable under ``policies``."""
    tools = policies.get("tools") or {}
    if spec.name in (tools.get("disable") or []):
        return False
    if spec.name in (tools.get("enable") or []):
        return True
    if spec.dev_only:
        for capability, names in CAPABILITY_TOOLS.items():
            section = policies.get(capability)
            if spec.name in names and isinstance(section, dict) and section.get("enabled"):
                return True
        return False
    return spec.enabled_by_default


def enabled_tool_names(mode: Any, policies: dict[str, Any]) -> set[str]:
    return {t.name for t in mode.manifest.tools if tool_enabled(t, policies)}


def forbidden_patterns(policies: dict[str, Any]) -> list[str]:
    """The sandbox's forbidden names: the host's fixed ones plus the policy's."""
    from pneuma.core.sandbox import DEFAULT_FORBIDDEN, _segment_forbidden

    out = list(DEFAULT_FORBIDDEN)
    for item in policies.get("forbiddenDirs") or []:
        name = str(item).strip("/")
        if name and _segment_forbidden(name, out) is None:
            out.append(name)
    return out
