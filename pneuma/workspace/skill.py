"""Installing a mode's skill into a workspace.

Everything the installer would write is first computed as a list of file
changes; ``--check`` reports them, a normal run applies them. Running twice
leaves every byte the same, so the second run's list is empty.

What it writes:
- ``.claude/skills/<installName>/``: the mode's skill folder, purged and
  copied, with init params filled into text files, plus ``.env`` from
  ``skill.envMapping``;
- ``CLAUDE.md``: every section from the ``claude_md_sections`` hook, each
  between its own markers, nothing else touched; the same sections in each
  of the backend's ``instruction_files`` (``AGENTS.md`` for Codex);
- ``.claude/commands/<workflow>.md``: one slash command per workflow;
- ``.mcp.json``: the mode's MCP servers merged in, the person's own entries kept;
- ``.gitignore``: ``.pneuma/`` added;
- ``.pneuma/installed.json``: what the installer owns, so that a command or
  MCP server the mode no longer declares is removed next time.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pneuma.core.state_files import write_beneath
from pneuma.host.manifest import localize
from pneuma.host.modes import ClaudeMdSection, LoadedMode
from pneuma.host.plugins import PneumaPluginManager, get_plugin_manager
from pneuma.workspace.claude_md import update_sections

TEMPLATED_SUFFIXES = {".md", ".txt", ".html", ".css", ".json"}
INSTALL_STATE = ".pneuma/installed.json"
SKILL_VERSION = ".pneuma/skill-version.json"
FINGERPRINT_FILE = ".pneuma/install-fingerprint.json"


class SkillInstallError(RuntimeError):
    """The workspace holds something the installer must not overwrite."""


@dataclass(frozen=True)
class FileChange:
    path: str  # relative to the workspace, POSIX separators
    content: bytes | None  # None deletes the file
    reason: str
    private: bool = False  # owner-only permissions (secrets)


@dataclass
class InstallResult:
    changes: list[FileChange] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.changes)


# --- templating of skill files ---

_SECTION = re.compile(r"\{\{([#^])\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}(.*?)\{\{/\s*\2\s*\}\}", re.S)
_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def _truthy(value: Any) -> bool:
    if value is None:
        return False
    return str(value).strip().lower() not in {"", "0", "false", "no", "off"}


def apply_params(text: str, params: Mapping[str, Any]) -> str:
    """Fill ``{{name}}``, keep ``{{#name}}…{{/name}}`` only when the param is
    set and ``{{^name}}…{{/name}}`` only when it is not. Placeholders that
    name no param are left as they are: skills may quote other template
    languages."""

    def section(match: re.Match[str]) -> str:
        kind, name, body = match.group(1), match.group(2), match.group(3)
        if name not in params:
            return match.group(0)
        keep = _truthy(params[name]) if kind == "#" else not _truthy(params[name])
        return _SECTION.sub(section, body) if keep else ""

    text = _SECTION.sub(section, text)
    return _VARIABLE.sub(
        lambda m: str(params[m.group(1)]) if m.group(1) in params else m.group(0), text
    )


def render_with_params(path: Path, params: Mapping[str, Any]) -> bytes:
    """The file's bytes, with the params filled in when it is a templated
    text file (docs/modes.md, "Params"); anything else as it is. The skill's
    files and the seed files both go through it."""
    data = path.read_bytes()
    if path.suffix.lower() in TEMPLATED_SUFFIXES and params:
        try:
            return apply_params(data.decode("utf-8"), params).encode("utf-8")
        except UnicodeDecodeError:
            return data
    return data


# --- planning ---


def _read(workspace: Path, rel: str) -> bytes | None:
    try:
        return (workspace / rel).read_bytes()
    except FileNotFoundError:
        return None


def _load_state(workspace: Path) -> dict[str, Any]:
    raw = _read(workspace, INSTALL_STATE)
    if raw is None:
        return {}
    try:
        state = json.loads(raw)
    except json.JSONDecodeError:
        return {}
    return state if isinstance(state, dict) else {}


def _json_bytes(data: Any) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def collect_sections(
    mode: LoadedMode, workspace: Path, pm: PneumaPluginManager
) -> list[ClaudeMdSection]:
    sections: list[ClaudeMdSection] = []
    owners: dict[str, str] = {}
    for impl in pm.hook.claude_md_sections.get_hookimpls():
        # Called one plugin at a time so a clash or a bad key names its plugin.
        try:
            result = impl.function(mode=mode, workspace=workspace) or []
        except ValueError as exc:
            raise SkillInstallError(f"plugin '{impl.plugin_name}': {exc}") from None
        for section in result:
            if section.key in owners:
                raise SkillInstallError(
                    f"CLAUDE.md section '{section.key or 'pneuma'}' is provided by both "
                    f"'{owners[section.key]}' and '{impl.plugin_name}'"
                )
            owners[section.key] = impl.plugin_name
            sections.append(section)
    # Host sections first, in a stable order, whatever order pluggy called them.
    sections.sort(key=lambda s: (s.key not in ("", "viewer-api"), s.key != "", s.key))
    return sections


def plan_install(
    mode: LoadedMode,
    workspace: Path,
    params: Mapping[str, Any],
    pm: PneumaPluginManager | None = None,
    instruction_files: tuple[str, ...] = (),
) -> InstallResult:
    pm = pm or get_plugin_manager()
    workspace = workspace.resolve()
    result = InstallResult()
    manifest = mode.manifest
    state = _load_state(workspace)
    desired: dict[str, bytes | None] = {}
    reasons: dict[str, str] = {}
    private: set[str] = set()

    def want(rel: str, content: bytes | None, reason: str) -> None:
        desired[rel] = content
        reasons[rel] = reason

    # 1. The skill folder, purged and copied.
    skill_root = f".claude/skills/{manifest.skill.install_name}"
    env_file: str | None = None
    wanted_skill: set[str] = set()
    for source in sorted(mode.skill_dir.rglob("*")):
        if not source.is_file() or "__pycache__" in source.parts:
            continue
        rel = f"{skill_root}/{source.relative_to(mode.skill_dir).as_posix()}"
        wanted_skill.add(rel)
        want(rel, render_with_params(source, params), "skill file")
    if manifest.skill.env_mapping:
        lines = []
        for env_name, param_name in sorted(manifest.skill.env_mapping.items()):
            value = params.get(param_name)
            if value is not None and str(value) != "":
                lines.append(f"{env_name}={_env_quote(str(value))}")
        rel = f"{skill_root}/.env"
        env_file = rel
        wanted_skill.add(rel)
        private.add(rel)
        want(rel, ("\n".join(lines) + "\n").encode() if lines else b"", "skill environment")
    installed_skill = workspace / skill_root
    if installed_skill.is_dir():
        for existing in installed_skill.rglob("*"):
            if existing.is_file() or existing.is_symlink():
                rel = existing.relative_to(workspace).as_posix()
                if rel not in wanted_skill:
                    want(rel, None, "no longer in the skill")

    # 2. CLAUDE.md sections.
    current_claude = _read(workspace, "CLAUDE.md")
    current_text = current_claude.decode("utf-8") if current_claude is not None else ""
    new_text = update_sections(
        current_text, collect_sections(mode, workspace, pm), str(workspace / "CLAUDE.md")
    )
    want("CLAUDE.md", new_text.encode("utf-8"), "CLAUDE.md sections")
    # The same sections where another backend's agent reads its instructions
    # (Codex reads AGENTS.md); the person's own text there stays as it is.
    for rel in instruction_files:
        current_file = _read(workspace, rel)
        current_file_text = current_file.decode("utf-8") if current_file is not None else ""
        file_text = update_sections(current_file_text, collect_sections(mode, workspace, pm),
                                    str(workspace / rel))
        want(rel, file_text.encode("utf-8"), f"{rel} sections")

    # 3. Workflows as slash commands.
    # Imported here: jinja2 is only needed when an install is computed, and
    # `pneuma run` usually finds the install up to date (install_fingerprint).
    from pneuma.workspace.default_sections import render_template, workflow_context

    # Commands written by an earlier install (of this or another mode) are
    # ours to rewrite or remove.
    owned_commands = set(state.get("commands", []))
    commands = []
    for workflow in manifest.workflows:
        rel = f".claude/commands/{workflow.id}.md"
        existing = _read(workspace, rel)
        if existing is not None and rel not in owned_commands:
            result.warnings.append(
                f"{rel} exists and was not written by Pneuma; the /{workflow.id} command was "
                "left as it is"
            )
            continue
        commands.append(rel)
        text = render_template(
            "claude_md/workflow_command.md.j2",
            workflow=workflow_context(workflow),
            mode=manifest.name,
            display_name=localize(manifest.display_name),
        )
        want(rel, text.encode("utf-8"), f"workflow /{workflow.id}")
    for rel in sorted(owned_commands - set(commands)):
        if (workspace / rel).exists():
            want(rel, None, "workflow no longer declared")

    # 4. .mcp.json.
    owned_servers = set(state.get("mcpServers", []))
    mcp_servers, mcp_content = _merge_mcp(workspace, mode, params, owned_servers, result)
    if mcp_content is not None:
        want(".mcp.json", mcp_content, "MCP servers")

    # 5. .gitignore.
    gitignore = _read(workspace, ".gitignore")
    gitignore_text = gitignore.decode("utf-8", errors="surrogateescape") if gitignore else ""
    ignore_lines = []
    if not _ignores_pneuma(gitignore_text):
        ignore_lines.append(".pneuma/")
    if env_file is not None and env_file not in gitignore_text.splitlines():
        # The skill's .env may hold secrets from sensitive params.
        ignore_lines.append(env_file)
    if ignore_lines:
        if gitignore_text and not gitignore_text.endswith("\n"):
            gitignore_text += "\n"
        gitignore_text += "".join(line + "\n" for line in ignore_lines)
        want(".gitignore", gitignore_text.encode("utf-8", errors="surrogateescape"), ".gitignore")

    # 6. What we own, and the skill's version (offered as an update later).
    new_state = {
        "mode": manifest.name,
        "version": manifest.version,
        "skill": skill_root,
        "commands": sorted(commands),
        "mcpServers": sorted(mcp_servers),
    }
    want(INSTALL_STATE, _json_bytes(new_state), "install record")
    want(
        SKILL_VERSION,
        _json_bytes({"mode": manifest.name, "version": manifest.version}),
        "skill version",
    )

    for rel, content in desired.items():
        current = _read(workspace, rel)
        if content is None:
            if current is not None or (workspace / rel).is_symlink():
                result.changes.append(FileChange(rel, None, reasons[rel]))
        elif current != content or (rel in private and _mode_of(workspace / rel) != 0o600):
            result.changes.append(FileChange(rel, content, reasons[rel], rel in private))
    return result


def _mode_of(path: Path) -> int:
    return path.stat().st_mode & 0o777


def _env_quote(value: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_./:@+-]*", value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _fill_strings(value: Any, params: Mapping[str, Any]) -> Any:
    """Apply params to every string inside a JSON-like value (never to JSON
    text, where a quote in a value would break the syntax)."""
    if isinstance(value, str):
        return apply_params(value, params)
    if isinstance(value, list):
        return [_fill_strings(item, params) for item in value]
    if isinstance(value, dict):
        return {key: _fill_strings(item, params) for key, item in value.items()}
    return value


def _ignores_pneuma(text: str) -> bool:
    for line in text.splitlines():
        if line.strip() in {".pneuma", ".pneuma/", "/.pneuma", "/.pneuma/", ".pneuma/*"}:
            return True
    return False


def _merge_mcp(
    workspace: Path,
    mode: LoadedMode,
    params: Mapping[str, Any],
    owned: set[str],
    result: InstallResult,
) -> tuple[set[str], bytes | None]:
    """Merge the mode's MCP servers into .mcp.json. Returns the names we own
    now and the new file content (None when the file need not exist)."""
    raw = _read(workspace, ".mcp.json")
    declared = mode.manifest.skill.mcp_servers
    if raw is None and not declared:
        return set(), None
    data: dict[str, Any] = {}
    if raw is not None:
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise SkillInstallError(
                f".mcp.json is not valid JSON (line {exc.lineno}: {exc.msg}); fix it by hand, "
                "Pneuma will not overwrite it"
            ) from None
        if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
            raise SkillInstallError(
                ".mcp.json must be an object whose 'mcpServers' is an object; fix it by hand"
            )
    servers: dict[str, Any] = dict(data.get("mcpServers", {}))
    now_owned: set[str] = set()
    declared_names = set()
    for server in declared:
        declared_names.add(server.name)
        if server.name in servers and server.name not in owned:
            result.warnings.append(
                f".mcp.json already has a server '{server.name}' of your own; it was kept"
            )
            continue
        entry = _fill_strings(server.to_mcp_json(), params)
        servers[server.name] = entry
        now_owned.add(server.name)
    for name in owned - declared_names:
        servers.pop(name, None)
    data["mcpServers"] = servers
    return now_owned, _json_bytes(data)


# --- applying ---


# Owner-only from the temp file's creation on: a secret is never readable
# by others, not even for a moment.
PRIVATE_MODE = 0o600


def apply_changes(workspace: Path, changes: list[FileChange]) -> None:
    workspace = workspace.resolve()
    for change in changes:
        target = workspace / change.path
        if change.content is None:
            target.unlink(missing_ok=True)
            _prune_empty_dirs(target.parent, workspace)
        else:
            # No folder on the way followed if it is a link: a `.claude`
            # linked to ~/.claude would make the install write there.
            write_beneath(workspace, change.path, change.content,
                          PRIVATE_MODE if change.private else None)


def _prune_empty_dirs(directory: Path, workspace: Path) -> None:
    stop = {workspace, workspace / ".claude", workspace / ".claude" / "skills"}
    while directory not in stop and directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()
        directory = directory.parent


def install_skill(
    mode: LoadedMode,
    workspace: Path,
    params: Mapping[str, Any],
    *,
    pm: PneumaPluginManager | None = None,
    check: bool = False,
    reuse_fingerprint: bool = False,
    instruction_files: tuple[str, ...] = (),
) -> InstallResult:
    """Install (or, with ``check``, only compute) the mode's skill.

    ``reuse_fingerprint`` (``pneuma run``): when nothing the install reads
    or writes has changed since the last install (``install_fingerprint``),
    return at once with that install's warnings and no changes, without
    rendering anything. Any difference means a full install.

    ``instruction_files``: the session's backend's (``BackendSpec``), which
    get the CLAUDE.md sections too."""
    workspace = Path(workspace)
    if not workspace.is_dir():
        raise SkillInstallError(f"workspace {workspace} is not a directory")
    pm = pm or get_plugin_manager()
    if reuse_fingerprint and not check:
        stored = _read_fingerprint(workspace)
        if stored is not None:
            current = install_fingerprint(mode, workspace, params, pm, instruction_files)
            if current is not None and current == stored.get("fingerprint"):
                return InstallResult(warnings=list(stored.get("warnings", [])))
    result = plan_install(mode, workspace, params, pm, instruction_files)
    if not check:
        apply_changes(workspace, result.changes)
        _write_fingerprint(workspace,
                           install_fingerprint(mode, workspace, params, pm, instruction_files),
                           result.warnings)
    return result


# --- the install fingerprint ---

# The installer's own code: a change to it may change what it writes.
_INSTALLER_SOURCES = ("workspace/skill.py", "workspace/default_sections.py",
                      "workspace/claude_md.py", "host/manifest.py")
_HOST_SECTIONS = "pneuma.workspace.default_sections"


def install_fingerprint(
    mode: LoadedMode,
    workspace: Path,
    params: Mapping[str, Any],
    pm: PneumaPluginManager | None = None,
    instruction_files: tuple[str, ...] = (),
) -> str | None:
    """A digest of everything an install depends on and everything it
    writes, as they are now; equal digests mean an install would change
    nothing. None when it cannot be known: a plugin other than the host
    adds CLAUDE.md sections (they may depend on anything).

    Inputs: the host version and installer code, the CLAUDE.md templates,
    the validated manifest, where the mode lives, the params, the skill
    folder (names and bytes). Outputs, as the workspace holds them now:
    CLAUDE.md, .mcp.json, .gitignore, the install records, every file in
    the installed skill folder and every slash command the mode or the
    last install names (bytes and permissions, or their absence)."""
    pm = pm or get_plugin_manager()
    if any(impl.plugin_name != _HOST_SECTIONS for impl in pm.hook.claude_md_sections.get_hookimpls()):
        return None
    from pneuma import __version__

    digest = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        digest.update(label.encode("utf-8", "surrogateescape"))
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)

    workspace = workspace.resolve()
    add("host", __version__.encode())
    for label, path in installer_files():
        add(label, path.read_bytes())
    add("manifest", mode.manifest.model_dump_json(by_alias=True).encode())
    add("where", f"{mode.package_dir}\0{mode.skill_dir}\0{workspace}".encode())
    add("params", json.dumps(dict(params), sort_keys=True, default=repr).encode())
    add("instruction files", "\0".join(instruction_files).encode())
    for path in sorted(mode.skill_dir.rglob("*")):
        if path.is_file():
            add("skill:" + path.relative_to(mode.skill_dir).as_posix(), path.read_bytes())

    def add_state(rel: str) -> None:
        path = workspace / rel
        try:
            if path.is_symlink():
                add("link:" + rel, os.readlink(path).encode("utf-8", "surrogateescape"))
                return
            data = path.read_bytes()
            add(f"file:{rel}:{path.stat().st_mode & 0o777:o}", data)
        except FileNotFoundError:
            add("missing:" + rel, b"")
        except OSError as exc:  # a directory where a file belongs, unreadable, ...
            add(f"odd:{rel}:{type(exc).__name__}", b"")

    for rel in [*installed_paths(mode, workspace), *instruction_files]:
        add_state(rel)
    return digest.hexdigest()


def installer_files() -> list[tuple[str, Path]]:
    """The installer's own code and CLAUDE.md templates, labelled: a change
    to any of them may change what an install writes."""
    from pneuma.host.paths import templates_dir

    host_dir = Path(__file__).resolve().parent.parent
    files = [("source:" + name, host_dir / name) for name in _INSTALLER_SOURCES]
    templates = templates_dir() / "claude_md"
    for path in sorted(templates.rglob("*")):
        if path.is_file():
            files.append(("template:" + path.relative_to(templates).as_posix(), path))
    return files


def installed_paths(mode: LoadedMode, workspace: Path) -> list[str]:
    """Every workspace path (relative) an install writes or may remove:
    the shared files, the install records, the installed skill folder's
    files and the slash commands the mode or the last install names."""
    paths = ["CLAUDE.md", ".mcp.json", ".gitignore", INSTALL_STATE, SKILL_VERSION]
    installed = workspace / f".claude/skills/{mode.manifest.skill.install_name}"
    if installed.is_dir():
        for path in sorted(installed.rglob("*")):
            if path.is_file() or path.is_symlink():
                paths.append(path.relative_to(workspace).as_posix())
    commands = {f".claude/commands/{w.id}.md" for w in mode.manifest.workflows}
    owned = _load_state(workspace).get("commands", [])
    if isinstance(owned, list):
        commands.update(c for c in owned if isinstance(c, str))
    paths.extend(sorted(commands))
    return paths


def _read_fingerprint(workspace: Path) -> dict[str, Any] | None:
    raw = _read(workspace, FINGERPRINT_FILE)
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("fingerprint"), str):
        return None
    if not isinstance(data.get("warnings", []), list):
        return None
    return data


def _write_fingerprint(workspace: Path, fingerprint: str | None, warnings: list[str]) -> None:
    path = workspace.resolve() / FINGERPRINT_FILE
    if fingerprint is None:
        path.unlink(missing_ok=True)
        return
    content = _json_bytes({"fingerprint": fingerprint, "warnings": warnings})
    if _read(workspace.resolve(), FINGERPRINT_FILE) == content:
        return  # a second install leaves every byte and every mtime as it was
    try:
        write_beneath(workspace.resolve(), FINGERPRINT_FILE, content)
    except OSError:
        pass  # only an optimisation: the next run installs in full
