"""The one module a Pneuma mode, backend or tool imports.

Everything a plugin needs of the host is re-exported here, typed and
documented in docs/api.md; nothing else in ``pneuma`` is promised to stay
where it is. ``pneuma.api`` follows semantic versioning through
``API_VERSION``: a name is removed or changed incompatibly only in a new
major version, after one minor version in which using it warns
(``DeprecationWarning``). Tests of a plugin use ``pneuma.testing``.

Names are loaded when first used, so that importing this module (which
every plugin does when its entry point loads) costs nothing at start-up.

    from pneuma.api import hookimpl, ModeSource, ToolError

    @hookimpl
    def register_modes():
        return [ModeSource(manifest=HERE / "manifest.json", package_dir=HERE)]
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

API_VERSION = "1.9.0"
"""The version of this API (semver); independent of the host's ``__version__``."""

# name -> "module:attribute" where it lives today (an implementation detail).
_EXPORTS: dict[str, str] = {
    # plugins
    "hookimpl": "pneuma:hookimpl",
    # modes and manifests
    "ModeSource": "pneuma.host.modes:ModeSource",
    "ModePlugin": "pneuma.host.mode_plugin:ModePlugin",
    "LoadedMode": "pneuma.host.modes:LoadedMode",
    "ClaudeMdSection": "pneuma.host.modes:ClaudeMdSection",
    "ModeManifest": "pneuma.host.manifest:ModeManifest",
    "ViewerApi": "pneuma.host.manifest:ViewerApi",
    "ViewerAction": "pneuma.host.manifest:ViewerAction",
    "WorkspaceModel": "pneuma.host.manifest:WorkspaceModel",
    "ToolSpec": "pneuma.host.manifest:ToolSpec",
    "WorkflowSpec": "pneuma.host.manifest:WorkflowSpec",
    "InitParam": "pneuma.host.manifest:InitParam",
    "localize": "pneuma.host.manifest:localize",
    "read_config": "pneuma.workspace.params:read_config",
    # a mode checked against the viewer contract (`pneuma mode check`)
    "check_mode": "pneuma.mode_check.run:check_mode",
    "ModeCheckReport": "pneuma.mode_check.report:ModeCheckReport",
    # exports (`pneuma export`, the shell's Export menu)
    "Exporter": "pneuma.host.exporters:Exporter",
    "ExportFormat": "pneuma.host.exporters:ExportFormat",
    "ExportRequest": "pneuma.host.exporters:ExportRequest",
    "ExportResult": "pneuma.host.exporters:ExportResult",
    "ExportError": "pneuma.host.exporters:ExportError",
    # publishing a folder of files to a person's target (register_publishers)
    "Publisher": "pneuma.host.publishers:Publisher",
    "PublishRequest": "pneuma.host.publishers:PublishRequest",
    "PublishResult": "pneuma.host.publishers:PublishResult",
    "PublishError": "pneuma.host.publishers:PublishError",
    # a turn's changes in the mode's terms (register_change_describers)
    "Change": "pneuma.host.turn_changes:Change",
    "ChangeDescriber": "pneuma.host.turn_changes:ChangeDescriber",
    "FileChange": "pneuma.host.turn_changes:FileChange",
    "TurnFiles": "pneuma.host.turn_changes:TurnFiles",
    "TurnFilesFromMaps": "pneuma.host.turn_changes:TurnFilesFromMaps",
    "describe_files": "pneuma.host.turn_changes:describe_files",
    "text_of": "pneuma.host.turn_changes:text_of",
    "Hunk": "pneuma.host.line_hunks:Hunk",
    "changed_hunks": "pneuma.host.line_hunks:changed_hunks",
    "revert_hunk": "pneuma.host.line_hunks:revert_hunk",
    "split_lines": "pneuma.host.line_hunks:split_lines",
    # checks after every turn (register_turn_checks)
    "TurnCheck": "pneuma.host.turn_checks:TurnCheck",
    "CheckRequest": "pneuma.host.turn_checks:CheckRequest",
    "CheckPage": "pneuma.host.turn_checks:CheckPage",
    "Problem": "pneuma.host.turn_checks:Problem",
    # agent backends
    "AgentBackend": "pneuma.core.backend:AgentBackend",
    "AgentEventSink": "pneuma.core.backend:AgentEventSink",
    "AgentPoint": "pneuma.core.backend:AgentPoint",
    "ForksConversation": "pneuma.core.backend:ForksConversation",
    "BackendOptions": "pneuma.core.backend:BackendOptions",
    "BackendSpec": "pneuma.core.backend:BackendSpec",
    "BackendStatus": "pneuma.core.backend:BackendStatus",
    "BackendCheckContext": "pneuma.core.backend:BackendCheckContext",
    "command_to_type": "pneuma.core.backend:command_to_type",
    "claude_credentials_found": "pneuma.llm.claude_credentials:credentials_found",
    # the running session
    "Pneuma": "pneuma.server.handle:Pneuma",
    "pneuma_of": "pneuma.server.handle:pneuma_of",
    "ServerConfig": "pneuma.server.config:ServerConfig",
    # the same server without `pneuma run`, for a tool that must serve a page
    "HeadlessServer": "pneuma.server.headless:HeadlessServer",
    "ensure_headless_server": "pneuma.server.headless:ensure_headless_server",
    "running_headless_server": "pneuma.server.headless:running_headless_server",
    # the workspace on an origin of its own, for previews that run its pages
    "ContentSite": "pneuma.server.content_site:ContentSite",
    # errors
    "ToolError": "pneuma.core.errors:ToolError",
    "ErrorCode": "pneuma.core.errors:ErrorCode",
    "ERROR_CODES": "pneuma.core.errors:ERROR_CODES",
    "HTTP_STATUS": "pneuma.core.errors:HTTP_STATUS",
    "error_response": "pneuma.server.errors:error_response",
    # modes installed from anywhere with pip (`pneuma mode add`, the mode-maker's Install)
    "install_mode": "pneuma.mode_sources.installer:install_mode",
    "remove_mode": "pneuma.mode_sources.installer:remove_mode",
    "build_mode_wheel": "pneuma.mode_sources.installer:build_mode_wheel",
    "InstalledMode": "pneuma.mode_sources.installed:InstalledMode",
    # tools and files
    "ToolContext": "pneuma.tools.context:ToolContext",
    "Interaction": "pneuma.tools.context:Interaction",
    "Sandbox": "pneuma.core.sandbox:Sandbox",
    "AGENT_INSTRUCTION_FILES": "pneuma.core.file_filter:AGENT_INSTRUCTION_FILES",
    "read_text": "pneuma.core.files:read_text",
    "atomic_write_text": "pneuma.core.files:atomic_write_text",
    "atomic_write_bytes": "pneuma.core.files:atomic_write_bytes",
    "write_in_workspace": "pneuma.core.files:write_in_workspace",
    # a mode's own state under .pneuma/, never through a link
    "read_state_bytes": "pneuma.core.state_files:read_state_bytes",
    "write_state_bytes": "pneuma.core.state_files:write_state_bytes",
    "UnsafeStatePath": "pneuma.core.state_files:UnsafeStatePath",
    "check_sqlite_files": "pneuma.core.state_files:check_sqlite_files",
    "content_hash": "pneuma.core.files:content_hash",
    "line_diff": "pneuma.tools.diff:line_diff",
    "apply_line_diff": "pneuma.tools.diff:apply_line_diff",
    "SnapshotStore": "pneuma.tools.snapshots:SnapshotStore",
    "ToolState": "pneuma.tools.state:ToolState",
    "forward_to_server": "pneuma.tools.runtime:forward_to_server",
    "request_json": "pneuma.tools.server_client:request_json",
    # the browser the host drives (slide export, screenshots, browser tools)
    "CHROMIUM": "pneuma.tools.chromium:CHROMIUM",
    "CHROMIUM_ARGS": "pneuma.tools.chromium:CHROMIUM_ARGS",
    "is_local_url": "pneuma.tools.browser:is_local_url",
    "html_to_pdf": "pneuma.tools.html_render:html_to_pdf",
    "html_to_png": "pneuma.tools.html_render:html_to_png",
    "html_to_dom": "pneuma.tools.html_render:html_to_dom",
    # run a viewer's module in Chromium with a job, and print in the same browser
    "ScriptPage": "pneuma.tools.script_page:ScriptPage",
    "run_script": "pneuma.tools.script_page:run_script",
    "run_script_then_pdf": "pneuma.tools.script_page:run_script_then_pdf",
    "shell_static_dir": "pneuma.host.paths:web_dir",
    # the shell's CJK web font (docs/viewer-contract.md, "Language")
    "CJK_FONT_FAMILY": "pneuma.host.cjk_font:CJK_FONT_FAMILY",
    "CJK_FONT_URL": "pneuma.host.cjk_font:CJK_FONT_URL",
    "cjk_font_dir": "pneuma.host.cjk_font:cjk_font_dir",
    "find_chromium": "pneuma.tools.html_render:find_chromium",
    # a time budget per page of an export: a page that hangs is left out, the rest exported
    "page_timeout_s": "pneuma.tools.html_render:page_timeout_s",
    "EXPORT_TIMEOUT_S": "pneuma.tools.html_render:EXPORT_TIMEOUT_S",
    "within": "pneuma.tools.html_render:within",
    "hung_page": "pneuma.tools.html_render:hung_page",
    "timed_out": "pneuma.tools.html_render:timed_out",
    "run_sync": "pneuma.tools.html_render:run_sync",
    "renderer_failure": "pneuma.tools.html_render:renderer_failure",
    # the one LLM gateway (every model call goes through it)
    "LLMGateway": "pneuma.llm.gateway:LLMGateway",
    "LLMSettings": "pneuma.llm.settings:LLMSettings",
    "GatewayError": "pneuma.llm.gateway:GatewayError",
    "ToolCallResult": "pneuma.llm.gateway:ToolCallResult",
    # the gateway's image side: an OpenAI-compatible images endpoint (since 1.8.0)
    "ImageGateway": "pneuma.llm.images:ImageGateway",
    "ImageSettings": "pneuma.llm.image_settings:ImageSettings",
    "GeneratedImage": "pneuma.llm.images:GeneratedImage",
    "load_image_settings": "pneuma.llm.image_settings:load_image_settings",
    "image_format": "pneuma.llm.images:image_format",
    # the host's one file watcher, for a mode's own command outside `pneuma run`
    "watch_workspace": "pneuma.server.watcher:watch_workspace",
    "FileFilter": "pneuma.core.file_filter:FileFilter",
    "SelfWrites": "pneuma.server.watcher:SelfWrites",
    # requests to the browser (viewer actions, confirmations) that found no tab or no answer
    "NoBrowserConnected": "pneuma.core.channels:NoBrowserConnected",
    "BrowserRequestTimeout": "pneuma.core.channels:BrowserRequestTimeout",
    # CLAUDE.md's Pneuma marker sections
    "find_sections": "pneuma.workspace.claude_md:find_sections",
    "MarkerError": "pneuma.workspace.claude_md:MarkerError",
    # run one of a mode's tools in-process (as `pneuma tool` does)
    "call_mode_tool": "pneuma.tools.runtime:call_tool",
    # a new mode package written into a folder (the mode-maker's workspace)
    "generate_mode_package": "pneuma.host.mode_package:generate_mode_package",
    "GeneratedPackage": "pneuma.host.mode_package:GeneratedPackage",
}

__all__ = ["API_VERSION", *_EXPORTS]

# name -> (what to use instead, the API_VERSION that removes it). A name
# listed here keeps working for at least one minor version and warns on every
# use (it is never cached in this module's globals, so each access warns).
_DEPRECATED: dict[str, tuple[str, str]] = {
    # The server's own settings object: no mode needs it, and holding it
    # would tie a mode to the server's internals (docs/api.md, "The review").
    "ServerConfig": ("pneuma.api.Pneuma (mode, workspace, params, sandbox)", "2.0.0"),
}

if TYPE_CHECKING:  # for type checkers and editors; at run time names load lazily
    from pneuma import hookimpl
    from pneuma.core.backend import (
        AgentBackend,
        AgentEventSink,
        AgentPoint,
        BackendCheckContext,
        BackendOptions,
        BackendSpec,
        BackendStatus,
        ForksConversation,
        command_to_type,
    )
    from pneuma.core.channels import BrowserRequestTimeout, NoBrowserConnected
    from pneuma.core.errors import ERROR_CODES, HTTP_STATUS, ErrorCode, ToolError
    from pneuma.core.file_filter import AGENT_INSTRUCTION_FILES, FileFilter
    from pneuma.core.files import (
        atomic_write_bytes,
        atomic_write_text,
        content_hash,
        read_text,
        write_in_workspace,
    )
    from pneuma.core.sandbox import Sandbox
    from pneuma.core.state_files import (
        UnsafeStatePath,
        check_sqlite_files,
        read_state_bytes,
        write_state_bytes,
    )
    from pneuma.host.cjk_font import CJK_FONT_FAMILY, CJK_FONT_URL, cjk_font_dir
    from pneuma.host.exporters import (
        Exporter,
        ExportError,
        ExportFormat,
        ExportRequest,
        ExportResult,
    )
    from pneuma.host.line_hunks import Hunk, changed_hunks, revert_hunk, split_lines
    from pneuma.host.manifest import (
        InitParam,
        ModeManifest,
        ToolSpec,
        ViewerAction,
        ViewerApi,
        WorkflowSpec,
        WorkspaceModel,
        localize,
    )
    from pneuma.host.mode_package import GeneratedPackage, generate_mode_package
    from pneuma.host.mode_plugin import ModePlugin
    from pneuma.host.modes import ClaudeMdSection, LoadedMode, ModeSource
    from pneuma.host.paths import web_dir as shell_static_dir
    from pneuma.host.publishers import (
        Publisher,
        PublishError,
        PublishRequest,
        PublishResult,
    )
    from pneuma.host.turn_changes import (
        Change,
        ChangeDescriber,
        FileChange,
        TurnFiles,
        TurnFilesFromMaps,
        describe_files,
        text_of,
    )
    from pneuma.host.turn_checks import CheckPage, CheckRequest, Problem, TurnCheck
    from pneuma.llm.claude_credentials import (
        credentials_found as claude_credentials_found,
    )
    from pneuma.llm.gateway import GatewayError, LLMGateway, ToolCallResult
    from pneuma.llm.image_settings import ImageSettings, load_image_settings
    from pneuma.llm.images import GeneratedImage, ImageGateway, image_format
    from pneuma.llm.settings import LLMSettings
    from pneuma.mode_check.report import ModeCheckReport
    from pneuma.mode_check.run import check_mode
    from pneuma.mode_sources.installed import InstalledMode
    from pneuma.mode_sources.installer import (
        build_mode_wheel,
        install_mode,
        remove_mode,
    )
    from pneuma.server.config import ServerConfig
    from pneuma.server.content_site import ContentSite
    from pneuma.server.errors import error_response
    from pneuma.server.handle import Pneuma, pneuma_of
    from pneuma.server.headless import (
        HeadlessServer,
        ensure_headless_server,
        running_headless_server,
    )
    from pneuma.server.watcher import SelfWrites, watch_workspace
    from pneuma.tools.browser import is_local_url
    from pneuma.tools.chromium import CHROMIUM, CHROMIUM_ARGS
    from pneuma.tools.context import Interaction, ToolContext
    from pneuma.tools.diff import apply_line_diff, line_diff
    from pneuma.tools.html_render import (
        EXPORT_TIMEOUT_S,
        find_chromium,
        html_to_dom,
        html_to_pdf,
        html_to_png,
        hung_page,
        page_timeout_s,
        renderer_failure,
        run_sync,
        timed_out,
        within,
    )
    from pneuma.tools.runtime import call_tool as call_mode_tool
    from pneuma.tools.runtime import forward_to_server
    from pneuma.tools.script_page import ScriptPage, run_script, run_script_then_pdf
    from pneuma.tools.server_client import request_json
    from pneuma.tools.snapshots import SnapshotStore
    from pneuma.tools.state import ToolState
    from pneuma.workspace.claude_md import MarkerError, find_sections
    from pneuma.workspace.params import read_config


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'pneuma.api' has no attribute {name!r}")
    module_name, _, attribute = target.partition(":")
    value = getattr(importlib.import_module(module_name), attribute)
    deprecation = _DEPRECATED.get(name)
    if deprecation is not None:
        replacement, removed_in = deprecation
        warnings.warn(
            f"pneuma.api.{name} is deprecated and will be removed in pneuma.api "
            f"{removed_in}; use {replacement} instead",
            DeprecationWarning,
            stacklevel=2,
        )
        return value
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
