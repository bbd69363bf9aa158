"""Workspace initialisation: seed files and init params.

A workspace with no content (nothing matches the mode's
``init.contentCheckPattern``) gets the mode's seed files. Init params are
asked once, stored in ``.pneuma/config.toml``, and reused afterwards.
"""

from __future__ import annotations

import os
import shutil
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wcmatch import glob as wcglob

from pneuma.core.file_filter import AGENT_INSTRUCTION_FILES
from pneuma.core.interrupts import interrupts_deferred
from pneuma.core.state_files import read_state_bytes, write_state_bytes
from pneuma.host.manifest import InitParam, localize
from pneuma.host.modes import LoadedMode
from pneuma.workspace.skill import render_with_params

CONFIG_FILE = ".pneuma/config.toml"
GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.BRACE | wcglob.NEGATE

# Directories never considered workspace content.
_NOT_CONTENT = {".git", ".pneuma", ".claude", "node_modules"}


class WorkspaceError(RuntimeError):
    pass


@dataclass
class InitResult:
    seeded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # seed targets that already existed
    params: dict[str, Any] = field(default_factory=dict)


def has_content(mode: LoadedMode, workspace: Path) -> bool:
    """Whether the workspace already holds this mode's content."""
    pattern = mode.manifest.init.content_check_pattern
    if pattern is None:
        return any(_content_files(workspace))
    for rel in _content_files(workspace):
        if wcglob.globmatch(rel, pattern, flags=GLOB_FLAGS):
            return True
    return False


def seeding_question(mode: LoadedMode, workspace: Path) -> list[str]:
    """The person's own files that make seeding ``workspace`` a question
    (sorted; empty when seeding here is plainly right): seeding goes
    without asking only into a folder that is empty or already of this
    mode (it holds the mode's content, or records the mode). Hidden files
    and the agent's instruction files do not count: they are not work."""
    from pneuma.workspace.mode_switch import workspace_mode

    if has_content(mode, workspace) or workspace_mode(workspace) == mode.name:
        return []  # nothing would be seeded, or the folder is the mode's already
    return sorted(rel for rel in _content_files(workspace)
                  if not any(part.startswith(".") for part in rel.split("/"))
                  and rel not in AGENT_INSTRUCTION_FILES)


def _content_files(workspace: Path):
    if not workspace.is_dir():
        return
    for path in workspace.rglob("*"):
        rel = path.relative_to(workspace)
        if rel.parts and rel.parts[0] in _NOT_CONTENT:
            continue
        if path.is_file():
            yield rel.as_posix()


def seed_files(mode: LoadedMode) -> list[tuple[Path, str]]:
    """Every seed file of the mode and where it goes in a workspace: (the
    file in the mode's package, the workspace-relative target)."""
    pairs: list[tuple[Path, str]] = []
    for source_rel, dest_rel in mode.manifest.init.seed_files.items():
        source = mode.package_dir / source_rel
        dest_rel = dest_rel or "."
        if source.is_dir():
            for item in sorted(source.rglob("*")):
                if item.is_file() and "__pycache__" not in item.parts:
                    pairs.append((item, (Path(dest_rel) / item.relative_to(source)).as_posix()))
        elif dest_rel.endswith("/") or dest_rel == ".":
            pairs.append((source, (Path(dest_rel) / source.name).as_posix()))
        else:
            pairs.append((source, dest_rel))
    return pairs


def seed_workspace(mode: LoadedMode, workspace: Path,
                   params: Mapping[str, Any] | None = None) -> InitResult:
    """Copy the mode's seed files into an empty workspace; never overwrite.
    Text seeds get the init params filled in as the skill's files do
    (docs/modes.md, "Params"): a print document starts on the paper asked for."""
    result = InitResult()
    workspace.mkdir(parents=True, exist_ok=True)
    if has_content(mode, workspace):
        return result
    # Half a seed would be "content": the rest would never be copied.
    with interrupts_deferred():
        for source, target_rel in seed_files(mode):
            _copy_new(source, workspace, target_rel, result, params or {})
    return result


def _copy_new(source: Path, workspace: Path, target_rel: str, result: InitResult,
              params: Mapping[str, Any]) -> None:
    target = workspace / target_rel
    if os.path.lexists(target):  # a link, even a dangling one, is never written through
        result.skipped.append(target_rel)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    if params:
        target.write_bytes(render_with_params(source, params))
    else:
        shutil.copyfile(source, target)
    result.seeded.append(Path(target_rel).as_posix())


# --- config and params ---


def read_config(workspace: Path) -> dict[str, Any]:
    path = workspace / CONFIG_FILE
    try:
        return tomllib.loads(read_state_bytes(path).decode("utf-8"))
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError as exc:
        raise WorkspaceError(f"{path} is not UTF-8 text: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise WorkspaceError(f"{path} is not valid TOML: {exc}") from None


def write_config(workspace: Path, config: Mapping[str, Any]) -> None:
    path = workspace / CONFIG_FILE
    import tomli_w  # only written once per workspace; not worth importing on every run

    data = tomli_w.dumps(dict(config)).encode("utf-8")
    try:
        if read_state_bytes(path) == data:
            return
    except FileNotFoundError:
        pass
    # Params may be secrets: the file is the owner's alone from its creation.
    write_state_bytes(path, data, 0o600)


def record_mode(workspace: Path, mode_name: str, *, create: bool) -> None:
    """Keep ``mode`` in config.toml as the workspace's mode: written by
    `pneuma init` (``create``), which installs no skill and starts no
    conversation that would say it otherwise, and kept true by later starts
    of another mode."""
    config = read_config(workspace)
    if config.get("mode") == mode_name or (not create and "mode" not in config):
        return
    write_config(workspace, {"mode": mode_name, **{k: v for k, v in config.items()
                                                  if k != "mode"}})


def coerce_param(param: InitParam, value: Any) -> Any:
    """Turn a raw answer into the param's type, or raise ValueError saying why
    (without repeating a sensitive value)."""
    try:
        return _coerce(param, value)
    except ValueError as exc:
        if param.sensitive:
            raise ValueError(str(exc).split(", got ")[0]) from None
        raise


def _coerce(param: InitParam, value: Any) -> Any:
    if param.type == "number":
        if isinstance(value, bool):
            raise ValueError(f"'{param.name}' must be a number")
        if isinstance(value, (int, float)):
            return value
        text = str(value).strip()
        try:
            return int(text)
        except ValueError:
            try:
                return float(text)
            except ValueError:
                raise ValueError(f"'{param.name}' must be a number, got {text!r}") from None
    text = str(value)
    if param.type == "select" and text not in param.options:
        raise ValueError(
            f"'{param.name}' must be one of {', '.join(param.options)}, got {text!r}"
        )
    return text


Prompter = Callable[[InitParam, Any], Any]


def click_prompter(param: InitParam, default: Any) -> Any:
    import click

    label = localize(param.label)
    help_text = localize(param.description)
    if help_text:
        click.echo(f"  {help_text}", err=True)
    kwargs: dict[str, Any] = {"err": True, "hide_input": param.sensitive}
    if param.type == "select":
        kwargs["type"] = click.Choice(param.options)
    if default is not None:
        # A secret's default is never echoed back.
        kwargs["default"] = default
        kwargs["show_default"] = not param.sensitive
    return click.prompt(label, **kwargs)


def resolve_params(
    mode: LoadedMode,
    workspace: Path,
    provided: Mapping[str, Any] | None = None,
    *,
    prompt: Prompter | None = None,
    save: bool = True,
) -> dict[str, Any]:
    """The init params for this workspace.

    Precedence: ``provided`` (command line) > stored in config.toml > asked
    through ``prompt`` > the manifest's default. Without a prompter a param
    with no default is an error. Answers are saved for next time.
    """
    provided = dict(provided or {})
    declared = {p.name: p for p in mode.manifest.init.params}
    unknown = sorted(set(provided) - set(declared))
    if unknown:
        known = ", ".join(declared) or "none"
        raise WorkspaceError(
            f"unknown param {', '.join(unknown)} for mode '{mode.name}' (its params: {known})"
        )
    config = read_config(workspace)
    stored_all = config.get("params", {})
    stored = stored_all.get(mode.name, {}) if isinstance(stored_all, dict) else {}
    values: dict[str, Any] = {}
    for name, param in declared.items():
        try:
            if name in provided:
                values[name] = coerce_param(param, provided[name])
            elif name in stored:
                values[name] = coerce_param(param, stored[name])
            elif prompt is not None:
                values[name] = coerce_param(param, prompt(param, param.default_value))
            elif param.default_value is not None:
                values[name] = coerce_param(param, param.default_value)
            else:
                raise WorkspaceError(
                    f"param '{name}' of mode '{mode.name}' has no default; pass "
                    f"--param {name}=VALUE or run without --no-prompt"
                )
        except ValueError as exc:
            raise WorkspaceError(str(exc)) from None
    if save and values and values != stored:
        params_table = dict(stored_all) if isinstance(stored_all, dict) else {}
        params_table[mode.name] = values
        config = dict(config)
        config["params"] = params_table
        write_config(workspace, config)
    return values


def redact_params(mode: LoadedMode, values: Mapping[str, Any]) -> dict[str, Any]:
    """Params safe to print or log: sensitive ones masked."""
    sensitive = {p.name for p in mode.manifest.init.params if p.sensitive}
    return {k: ("••••••" if k in sensitive else v) for k, v in values.items()}


def init_workspace(
    mode: LoadedMode,
    workspace: Path,
    provided: Mapping[str, Any] | None = None,
    *,
    prompt: Prompter | None = None,
    record: bool = False,
    with_seeds: bool = True,
) -> InitResult:
    """Seed an empty workspace (unless ``with_seeds`` is False) and settle its
    params (``record``: and record its mode, see ``record_mode``)."""
    workspace = Path(workspace)
    if workspace.exists() and not workspace.is_dir():
        raise WorkspaceError(f"{workspace} exists and is not a directory")
    workspace.mkdir(parents=True, exist_ok=True)
    # Params first: a bad or missing one must fail before anything is copied.
    params = resolve_params(mode, workspace, provided, prompt=prompt)
    record_mode(workspace, mode.name, create=record)
    result = seed_workspace(mode, workspace, params) if with_seeds else InitResult()
    result.params = params
    return result
