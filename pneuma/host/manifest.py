"""The mode manifest: pure data that the server, the skill installer, the CLI
and the browser all read.

Field names on the wire (JSON files, `pneuma modes schema`, the browser) are
camelCase as in the viewer contract; Python code uses the snake_case
attribute names. Unknown fields are rejected so that a typo in a mode's
manifest is an error naming the field, not a silently ignored setting.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import InitErrorDetails, PydanticCustomError

from pneuma.host.tool_catalogue import HOST_TOOL_PREFIX, host_tool_names, host_tool_spec

MANIFEST_SCHEMA_VERSION = 1

_MODE_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9:_.-]*$")
_SEMVER = re.compile(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$")
_HANDLER = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        # Validators are built when first used, not at import: only
        # ModeManifest is ever validated directly (its schema includes the
        # nested models), so building one validator per class was wasted
        # start-up time.
        defer_build=True,
    )


def _unique(field: str, key: str, kind: str) -> Any:
    """The validator of a list ``field`` whose items' ``key`` must differ:
    ``duplicate <kind> '<value>'`` otherwise."""

    def check(cls: type, items: list[Any]) -> list[Any]:
        _reject_duplicates([getattr(item, key) for item in items], kind)
        return items

    return field_validator(field)(classmethod(check))


def _matching(field: str, pattern: re.Pattern[str], message: str) -> Any:
    """The validator of a string ``field`` that must match ``pattern``;
    ``message`` says what it must look like (clearer than the pattern)."""

    def check(cls: type, value: str) -> str:
        if not pattern.match(value):
            raise ValueError(message)
        return value

    return field_validator(field)(classmethod(check))


LocalizedText = str | dict[str, str]
"""A plain string, or a mapping from locale (``en``, ``zh-CN``) to text."""


def localize(text: LocalizedText | None, locale: str = "en") -> str:
    """Pick the text for ``locale``: exact match, then its language, then
    English, then the first entry."""
    if text is None:
        return ""
    if isinstance(text, str):
        return text
    if not text:
        return ""
    if locale in text:
        return text[locale]
    language = locale.split("-")[0]
    for key, value in text.items():
        if key.split("-")[0] == language:
            return value
    if "en" in text:
        return text["en"]
    return next(iter(text.values()))


class McpServer(_Model):
    """An MCP server the agent should have, merged into the workspace's .mcp.json."""

    name: str = Field(min_length=1)
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _command_or_url(self) -> "McpServer":
        if (self.command is None) == (self.url is None):
            raise ValueError("an MCP server needs exactly one of 'command' or 'url'")
        return self

    def to_mcp_json(self) -> dict[str, Any]:
        """The entry as Claude Code's .mcp.json expects it."""
        entry: dict[str, Any]
        if self.command is not None:
            entry = {"command": self.command, "args": list(self.args)}
            if self.env:
                entry["env"] = dict(self.env)
        else:
            entry = {"type": "http", "url": self.url}
            if self.headers:
                entry["headers"] = dict(self.headers)
        return entry


class SkillSpec(_Model):
    """What the agent must know, installed into the workspace's .claude/skills/."""

    source_dir: str = "skill"
    install_name: str = Field(min_length=1)
    md_scene: str = ""
    env_mapping: dict[str, str] = Field(default_factory=dict)
    mcp_servers: list[McpServer] = Field(default_factory=list)
    skill_dependencies: list[str] = Field(default_factory=list)

    @field_validator("install_name")
    @classmethod
    def _plain_dir_name(cls, value: str) -> str:
        if "/" in value or "\\" in value or value in {".", ".."}:
            raise ValueError("must be a single directory name")
        return value


class ViewerSpec(_Model):
    """Which files the viewer shows and how it is loaded in the browser."""

    watch_patterns: list[str] = Field(default_factory=lambda: ["**/*"])
    ignore_patterns: list[str] = Field(default_factory=list)
    refresh_strategy: Literal["auto", "manual"] = "auto"
    update_strategy: Literal["full-reload", "incremental"] = "incremental"
    module: str | None = Field(
        default=None,
        description="ES module of the viewer, relative to the mode's static directory.",
    )
    static_dir: str = Field(
        default="static",
        description="Directory inside the mode package served at /modes/<name>/.",
    )
    text_suffixes: list[str] = Field(
        default_factory=list,
        description="Suffixes of the mode's own text formats (e.g. '.mmd') that the viewer "
        "receives as text, like the built-in ones ('.md', '.json', ...).",
    )


class AgentSpec(_Model):
    permission_mode: Literal["default", "acceptEdits", "bypassPermissions", "plan"] = (
        "bypassPermissions"
    )
    greeting: str | None = Field(
        default=None,
        description="Hidden first prompt for a fresh session; never shown in the history.",
    )


class InitParam(_Model):
    """A question asked on first launch; the answer fills {{name}} in the skill."""

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    label: LocalizedText
    description: LocalizedText = ""
    type: Literal["string", "number", "select"] = "string"
    options: list[str] = Field(default_factory=list)
    default_value: str | int | float | None = None
    sensitive: bool = False

    @model_validator(mode="after")
    def _select_has_options(self) -> "InitParam":
        if self.type == "select":
            if not self.options:
                raise ValueError("a 'select' param needs 'options'")
            if self.default_value is not None and str(self.default_value) not in self.options:
                raise ValueError("'defaultValue' must be one of 'options'")
        if self.type == "number" and isinstance(self.default_value, str):
            try:
                float(self.default_value)
            except ValueError:
                raise ValueError("'defaultValue' of a 'number' param must be a number") from None
        return self


class InitSpec(_Model):
    content_check_pattern: str | None = Field(
        default=None,
        description="Glob; when nothing in the workspace matches it, seed files are copied.",
    )
    seed_files: dict[str, str] = Field(
        default_factory=dict,
        description="Source (relative to the mode package) → destination (relative to the "
        "workspace). A source ending in '/' copies a directory.",
    )
    params: list[InitParam] = Field(default_factory=list)

    _unique_names = _unique("params", "name", "param")


class WorkspaceModel(_Model):
    """How the viewer organises files (docs/mode-authors.md, "How the viewer organises files")."""

    type: Literal["all", "manifest", "single"]
    multi_file: bool
    ordered: bool
    has_active_file: bool
    manifest_file: str | None = None
    supports_content_sets: bool = False

    @model_validator(mode="after")
    def _manifest_needs_file(self) -> "WorkspaceModel":
        if self.type == "manifest" and not self.manifest_file:
            raise ValueError("a 'manifest' workspace needs 'manifestFile'")
        return self


class ViewerActionParam(_Model):
    type: Literal["string", "number", "boolean", "array", "object"]
    description: str = ""
    required: bool = False


class ViewerAction(_Model):
    """One thing the viewer can do, for the person and (if agentInvocable) the agent."""

    id: str = Field(pattern=_ID.pattern)
    label: LocalizedText
    category: Literal["file", "navigate", "ui", "custom"]
    agent_invocable: bool = True
    params: dict[str, ViewerActionParam] = Field(default_factory=dict)
    description: str = ""


class ViewerCommand(_Model):
    """A shortcut the person can click that sends a prompt to the agent."""

    id: str = Field(pattern=_ID.pattern)
    label: LocalizedText
    prompt: str = Field(min_length=1)
    # The button's tooltip: person-facing, so localized like the label (the
    # prompt itself goes to the agent and stays as written).
    description: LocalizedText = ""


class ScaffoldSpec(_Model):
    """Starting a workspace over; always needs the person's confirmation."""

    description: str
    params: dict[str, ViewerActionParam] = Field(default_factory=dict)
    clear_patterns: list[str] = Field(default_factory=list)


class ViewerApi(_Model):
    workspace: WorkspaceModel | None = None
    actions: list[ViewerAction] = Field(default_factory=list)
    commands: list[ViewerCommand] = Field(default_factory=list)
    scaffold: ScaffoldSpec | None = None

    _unique_actions = _unique("actions", "id", "action")
    _unique_commands = _unique("commands", "id", "command")


JsonSchema = dict[str, Any]


class ToolSpec(_Model):
    """A tool the mode gives the agent (over MCP, `pneuma tool`, or the native runtime)."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str = Field(min_length=1)
    input_schema: JsonSchema
    output_schema: JsonSchema | None = None
    handler: str = Field(
        description="'package.module:function' called with the validated arguments, "
        "or 'pneuma:<tool>' for one of the host's own tools (its description and "
        "schemas are filled in from the host's catalogue; the description may be given).",
    )
    enabled_by_default: bool = True
    dev_only: bool = Field(
        default=False,
        description="Only available when a policy or flag turns it on (commands, browser).",
    )

    @model_validator(mode="before")
    @classmethod
    def _host_tool(cls, data: Any) -> Any:
        """``"handler": "pneuma:read_file"``: the host's tool, its description
        and schemas from the host's catalogue unless the entry gives them."""
        if not isinstance(data, dict):
            return data
        handler = data.get("handler")
        if not isinstance(handler, str) or not handler.startswith(HOST_TOOL_PREFIX):
            return data
        spec = host_tool_spec(handler[len(HOST_TOOL_PREFIX):])
        if spec is None:
            raise ValueError(f"'{handler}' is not a host tool (host tools: "
                             f"{', '.join(host_tool_names())})")
        spec.pop("handler")
        spec.pop("name", None)
        return {**spec, **data}

    _handler_reference = _matching("handler", _HANDLER, "must look like 'package.module:function'")

    @field_validator("input_schema", "output_schema")
    @classmethod
    def _valid_json_schema(cls, schema: JsonSchema | None, info: ValidationInfo) -> JsonSchema | None:
        if schema is None:
            return schema
        cache = info.context.get("schema_cache") if isinstance(info.context, dict) else None
        if cache is None or not cache.known_valid(schema):
            # Imported here: jsonschema costs a noticeable part of start-up.
            from jsonschema.exceptions import SchemaError
            from jsonschema.validators import Draft202012Validator

            try:
                Draft202012Validator.check_schema(schema)
            except SchemaError as exc:
                raise ValueError(f"not a valid JSON Schema: {exc.message}") from None
            if cache is not None:
                cache.add(schema)
        if schema.get("type") != "object":
            raise ValueError("a tool's schema must describe an object ('type': 'object')")
        return schema


class WorkflowStep(_Model):
    """One step of a workflow: call a tool or a viewer action, or ask the agent."""

    id: str = Field(pattern=_ID.pattern)
    label: LocalizedText
    tool: str | None = None
    action: str | None = None
    prompt: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    requires_confirmation: bool = False
    description: str = ""

    @model_validator(mode="after")
    def _exactly_one_kind(self) -> "WorkflowStep":
        kinds = [k for k in ("tool", "action", "prompt") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError("a step names exactly one of 'tool', 'action' or 'prompt'")
        return self


class WorkflowSpec(_Model):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    label: LocalizedText
    description: str = ""
    steps: list[WorkflowStep] = Field(min_length=1)

    _unique_steps = _unique("steps", "id", "step")


class ModeManifest(_Model):
    """Everything a mode declares about itself."""

    name: str = Field(description="Mode name used on the command line: `pneuma run --mode NAME`.")
    version: str
    changelog: dict[str, list[str]] = Field(default_factory=dict)
    display_name: LocalizedText
    description: LocalizedText = ""
    icon: str | None = Field(default=None, description="Inline SVG.")
    hidden: bool = False
    # Backend names, the built-in ones and any a plugin registers (codex, ...):
    # left out, every installed backend is allowed (pneuma.startup.start_checks).
    supported_backends: list[Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")]] = Field(
        default_factory=lambda: ["claude-code", "native", "socket", "none"],
        description="The backends this mode works with (`pneuma backends` lists them); "
                    "when left out, every installed backend.",
    )
    layout: Literal["editor", "app"] = "editor"
    skill: SkillSpec
    viewer: ViewerSpec = Field(default_factory=ViewerSpec)
    agent: AgentSpec = Field(default_factory=AgentSpec)
    init: InitSpec = Field(default_factory=InitSpec)
    viewer_api: ViewerApi = Field(default_factory=ViewerApi)
    tools: list[ToolSpec] = Field(default_factory=list)
    workflows: list[WorkflowSpec] = Field(default_factory=list)

    _mode_name = _matching(
        "name", _MODE_NAME, "must be lowercase letters, digits, '-' or '_', starting with a letter")
    _semver = _matching("version", _SEMVER, "must be a semantic version such as 1.2.0")

    _unique_tools = _unique("tools", "name", "tool")
    _unique_workflows = _unique("workflows", "id", "workflow")

    @model_validator(mode="after")
    def _steps_name_known_things(self) -> "ModeManifest":
        tools = {t.name for t in self.tools}
        actions = {a.id for a in self.viewer_api.actions}
        problems: list[InitErrorDetails] = []
        for w, workflow in enumerate(self.workflows):
            for s, step in enumerate(workflow.steps):
                where = f"workflow '{workflow.id}' step '{step.id}'"
                if step.tool is not None and step.tool not in tools:
                    message = f"{where} names unknown tool '{step.tool}'"
                    loc: tuple[str | int, ...] = ("workflows", w, "steps", s, "tool")
                    value = step.tool
                elif step.action is not None and step.action not in actions:
                    message = f"{where} names unknown viewer action '{step.action}'"
                    loc = ("workflows", w, "steps", s, "action")
                    value = step.action
                else:
                    continue
                # A ValidationError (not a ValueError) keeps the field path, so
                # the author is told exactly which step to fix.
                problems.append(
                    InitErrorDetails(
                        type=PydanticCustomError("unknown_reference", message),
                        loc=loc,
                        input=value,
                    )
                )
        if problems:
            raise ValidationError.from_exception_data("ModeManifest", problems)
        return self

    # Convenience lookups used by the server and the skill installer.
    def action(self, action_id: str) -> ViewerAction | None:
        return next((a for a in self.viewer_api.actions if a.id == action_id), None)

    def tool(self, name: str) -> ToolSpec | None:
        return next((t for t in self.tools if t.name == name), None)

    @property
    def agent_actions(self) -> list[ViewerAction]:
        return [a for a in self.viewer_api.actions if a.agent_invocable]

    def to_json(self) -> dict[str, Any]:
        """The manifest as the browser and `pneuma modes --json` see it (camelCase)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class ManifestError(ValueError):
    """A mode's manifest is invalid; the message names the plugin and each bad field."""

    def __init__(self, plugin: str, problems: list[str]):
        self.plugin = plugin
        self.problems = problems
        super().__init__(f"invalid manifest in plugin '{plugin}': " + "; ".join(problems))


def parse_manifest(data: Any, plugin: str, *, schema_cache: bool = False) -> ModeManifest:
    """Validate raw manifest data, raising ManifestError that names fields by
    their manifest path, e.g. ``viewerApi.actions.0.category``.

    ``schema_cache``: skip the meta-schema check of tool schemas that an
    earlier run already found valid (``SchemaCheckCache``); the result is
    the same, only faster (``pneuma run``)."""
    cache = SchemaCheckCache.load() if schema_cache else None
    try:
        return ModeManifest.model_validate(data, context={"schema_cache": cache})
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            location = ".".join(str(part) for part in error["loc"]) or "(manifest)"
            message = error["msg"].removeprefix("Value error, ")
            problems.append(f"{location}: {message}")
        raise ManifestError(plugin, problems) from None
    finally:
        if cache is not None:
            cache.save()


class SchemaCheckCache:
    """Digests of tool schemas that passed Draft 2020-12's meta-schema check.

    Whether a schema is valid depends on nothing but the schema, so a
    schema seen valid once needs no second check: ``pneuma run`` then
    neither imports jsonschema nor walks the meta-schema for every tool of
    its mode. Invalid schemas are never recorded, so they fail every time.
    Kept in ``$XDG_CACHE_HOME/pneuma/`` (``~/.cache``); a cache that cannot
    be read or written is simply not used.
    """

    FILE = "checked-tool-schemas.json"
    LIMIT = 4096  # digests kept

    def __init__(self, path: Path | None, digests: list[str]) -> None:
        self.path = path
        self.digests = digests
        self._known = set(digests)
        self._dirty = False

    @classmethod
    def directory(cls) -> Path:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return Path(base) / "pneuma"

    @classmethod
    def load(cls) -> "SchemaCheckCache":
        path = cls.directory() / cls.FILE
        digests: list[str] = []
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("draft") == "2020-12":
                digests = [d for d in data.get("valid", []) if isinstance(d, str)]
        except (OSError, ValueError):
            pass
        return cls(path, digests)

    @staticmethod
    def digest(schema: JsonSchema) -> str:
        text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def known_valid(self, schema: JsonSchema) -> bool:
        try:
            return self.digest(schema) in self._known
        except (TypeError, ValueError):  # not JSON data: let the real check say why
            return False

    def add(self, schema: JsonSchema) -> None:
        try:
            digest = self.digest(schema)
        except (TypeError, ValueError):
            return
        if digest not in self._known:
            self._known.add(digest)
            self.digests.append(digest)
            self._dirty = True

    def save(self) -> None:
        if not self._dirty or self.path is None:
            return
        self._dirty = False
        data = {"draft": "2020-12", "valid": self.digests[-self.LIMIT :]}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            pass


def manifest_json_schema() -> dict[str, Any]:
    """The JSON Schema of a manifest as mode authors write it."""
    schema = ModeManifest.model_json_schema(by_alias=True, mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Pneuma mode manifest"
    return schema


def _reject_duplicates(ids: list[str], kind: str) -> None:
    seen: set[str] = set()
    for item in ids:
        if item in seen:
            raise ValueError(f"duplicate {kind} '{item}'")
        seen.add(item)

