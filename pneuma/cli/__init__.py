"""The ``pneuma`` command line.

Imports stay inside the commands so that ``pneuma run`` reaches its ready
line quickly; plugins add their own commands through ``register_commands``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from pneuma import __version__
from pneuma.cli.checkpoints import checkpoints
from pneuma.cli.conversations import conversations
from pneuma.cli.export import export_command
from pneuma.cli.mode_command import mode
from pneuma.cli.modes_command import modes
from pneuma.cli.new_mode_command import new_mode_command
from pneuma.cli.publish import publish_command
from pneuma.cli.share import share_command
from pneuma.cli.workspace_words import refuse_missing_workspace, refuse_other_mode
from pneuma.startup.backends import backends

if TYPE_CHECKING:
    from pneuma.startup.start_checks import Seeding


class PneumaGroup(click.Group):
    """Adds plugin commands the first time the command list is needed."""

    _plugins_added = False
    _adding_plugin: str | None = None

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        name = name or cmd.name
        if self._adding_plugin is not None and name in self.commands:
            # A plugin must not silently replace `run`, `skill` or another
            # plugin's command.
            click.echo(
                f"[pneuma] warning: plugin '{self._adding_plugin}' tried to add a command "
                f"'{name}' that already exists; it was ignored",
                err=True,
            )
            return
        super().add_command(cmd, name)

    def _add_plugin_commands(self) -> None:
        if self._plugins_added:
            return
        self._plugins_added = True
        from pneuma.host.plugins import get_plugin_manager

        pm = get_plugin_manager()
        for impl in pm.hook.register_commands.get_hookimpls():
            self._adding_plugin = impl.plugin_name
            try:
                impl.function(cli=self)
            except Exception as exc:  # a plugin's bad command must not break the CLI
                click.echo(
                    f"[pneuma] warning: plugin '{impl.plugin_name}' failed to add its "
                    f"commands: {type(exc).__name__}: {exc}",
                    err=True,
                )
            finally:
                self._adding_plugin = None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None:
            self._add_plugin_commands()
            command = super().get_command(ctx, cmd_name)
        return command

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._add_plugin_commands()
        return super().list_commands(ctx)


@click.group(cls=PneumaGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pneuma")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Pneuma: make things with a code agent and watch them live in the browser.

    With no command, opens the launcher (`pneuma open`)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(open_command)


def main() -> None:
    import signal

    # Loaded: Ctrl-C is the commands' own again (pneuma/__init__.py kept it quiet till now).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    cli(prog_name="pneuma")


def _fail(message: str, code: int = 1) -> None:
    click.echo(f"pneuma: error: {message}", err=True)
    sys.exit(code)


def _echo_notice(line: str) -> None:
    click.echo(f"[pneuma] {line}", err=True)


def _install_skill(mode: Any, workspace: Path, values: dict[str, Any], **options: Any) -> Any:
    """Install (or with ``check=True`` compare) the mode's skill; a marker or
    install problem ends the command with status 2, warnings go to stderr."""
    from pneuma.startup.start_checks import StartProblem, install_skill

    try:
        return install_skill(mode, workspace, values, _echo_notice, **options)
    except StartProblem as exc:
        _fail(exc.message, exc.code)


def _load_mode(name: str, *, schema_cache: bool = True):
    """The mode for a command (pneuma.startup.start_checks.load_mode); an
    unknown one ends the command with status 2."""
    from pneuma.startup.start_checks import StartProblem, load_mode

    try:
        return load_mode(name, schema_cache=schema_cache)
    except StartProblem as exc:
        _fail(exc.message, exc.code)


def _parse_params(raw: tuple[str, ...]) -> dict[str, str]:
    params = {}
    for item in raw:
        if "=" not in item:
            raise click.BadParameter(f"expected NAME=VALUE, got {item!r}", param_hint="--param")
        name, value = item.split("=", 1)
        params[name.strip()] = value
    return params


# --- pneuma init / skill ---

_workspace_option = click.option(
    "--workspace",
    "-w",
    # Not file_okay=False: click's own "Directory … is a file" would be the
    # one message not said as the commands say it (pneuma/cli/workspace_words.py).
    type=click.Path(path_type=Path),
    default=Path("."),
    show_default=True,
    help="The workspace directory.",
)
_param_option = click.option(
    "--param", "params", multiple=True, metavar="NAME=VALUE", help="Set an init param."
)
_switch_mode_option = click.option(
    "--switch-mode", is_flag=True,
    help="Use a workspace of another mode with this one (its conversation is kept and "
    "resumes when you switch back).")


def prepare_workspace(
    mode_name: str, workspace: Path, params: dict[str, str], no_prompt: bool,
    switch_mode: bool = False, record: bool = False, seeding: Seeding = "ask",
) -> tuple[Any, dict[str, Any]]:
    """Seed the workspace and settle params; shared by init and skill install.
    Another mode's workspace is refused as `pneuma run` refuses it, unless
    ``switch_mode``; ``record``: record the mode (init)."""
    from pneuma.startup.start_checks import (
        StartProblem,
        refuse_unsafe_state,
        settle_mode,
        switched_seeding,
    )
    from pneuma.startup.start_checks import prepare_workspace as prepare

    try:
        refuse_unsafe_state(workspace)
        settle_mode(workspace, mode_name, switch_mode, _echo_notice)
        return prepare(mode_name, workspace, params, _prompter(no_prompt), _echo_notice,
                       record=record, seeding=switched_seeding(seeding, switch_mode),
                       confirm=_confirmer(no_prompt))
    except StartProblem as exc:
        _fail(exc.message, exc.code)


def _confirmer(no_prompt: bool) -> Callable[[str], bool] | None:
    """Asks a yes/no question in a terminal (no by default), unless told not to."""
    if no_prompt or not sys.stdin.isatty():
        return None
    return lambda question: bool(click.confirm(question, default=False, err=True))


_seed_option = click.option(
    "--seed", "seed_anyway", is_flag=True,
    help="Seed the mode's starter files even into a folder holding other files "
    "(otherwise only an empty folder is seeded without asking).")


def _prompter(no_prompt: bool) -> Any:
    """Asks for a missing param in a terminal, unless told not to."""
    from pneuma.workspace.params import click_prompter

    return click_prompter if not no_prompt and sys.stdin.isatty() else None


@cli.command("init")
@click.option("--mode", "mode_name", required=True, help="Mode name (see `pneuma modes`).")
@_workspace_option
@_param_option
@click.option("--no-prompt", is_flag=True, help="Use defaults instead of asking for params.")
@_switch_mode_option
@_seed_option
def init_command(mode_name: str, workspace: Path, params: tuple[str, ...], no_prompt: bool,
                 switch_mode: bool, seed_anyway: bool) -> None:
    """Seed an empty workspace with the mode's starter files, store its params and its mode."""
    prepare_workspace(mode_name, workspace, _parse_params(params), no_prompt, switch_mode,
                      record=True, seeding="always" if seed_anyway else "ask")


@cli.group()
def skill() -> None:
    """Install a mode's skill into a workspace."""


@skill.command("install")
@click.option("--mode", "mode_name", required=True, help="Mode name (see `pneuma modes`).")
@_workspace_option
@_param_option
@click.option("--no-prompt", is_flag=True, help="Use defaults instead of asking for params.")
@click.option("--check", is_flag=True, help="Change nothing; exit 1 if anything would change.")
@click.option("--backend", default="claude-code", show_default=True,
              help="The backend the workspace is for: codex also gets AGENTS.md sections.")
@_switch_mode_option
def skill_install(
    mode_name: str, workspace: Path, params: tuple[str, ...], no_prompt: bool, check: bool,
    backend: str, switch_mode: bool,
) -> None:
    """Install the skill, CLAUDE.md sections, slash commands and MCP servers."""
    from pneuma.startup.start_checks import backend_instruction_files

    if check:
        from pneuma.workspace.params import WorkspaceError, resolve_params

        mode = _load_mode(mode_name)
        # --check exits 1 when anything would change: everything would here.
        refuse_missing_workspace(workspace, code=1)
        if not switch_mode:  # --check changes nothing: a switch is only said, never made
            refuse_other_mode(workspace, mode_name)
        try:
            values = resolve_params(mode, workspace, _parse_params(params), save=False)
        except WorkspaceError as exc:
            _fail(str(exc), 2)
    else:
        # The skill is its work: starter files go only where run would put them unasked.
        mode, values = prepare_workspace(mode_name, workspace, _parse_params(params), no_prompt,
                                         switch_mode, seeding="never-beside")
    result = _install_skill(mode, workspace, values, check=check,
                            instruction_files=backend_instruction_files(backend))
    verb = "would change" if check else "changed"
    for change in result.changes:
        action = "delete" if change.content is None else "write"
        click.echo(f"  {verb}: {action} {change.path}  ({change.reason})")
    if check:
        if result.changed:
            click.echo(f"[pneuma] {len(result.changes)} file(s) out of date", err=True)
            sys.exit(1)
        click.echo("[pneuma] skill is up to date", err=True)
    else:
        click.echo(
            f"[pneuma] {mode.name} skill installed in {workspace} "
            f"({len(result.changes)} file(s) changed)",
            err=True,
        )


# --- pneuma run ---


@cli.command("run")
@click.option("--mode", "mode_name", required=True, help="Mode name (see `pneuma modes`).")
@_workspace_option
@click.option("--port", type=click.IntRange(0, 65535), default=17007, show_default=True,
              help="First port to try; the next free one is used if it is taken (0: any).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Anything but loopback exposes the agent to your network.")
@click.option("--backend", default="claude-code", show_default=True,
              help="Agent backend (`pneuma backends` lists them and which work now).")
@click.option("--model", default=None, help="Model for the agent.")
@click.option("--permission-mode",
              type=click.Choice(["default", "acceptEdits", "bypassPermissions", "plan"]),
              default=None, help="Override the mode's agent.permissionMode.")
@click.option("--no-open", is_flag=True, help="Do not open the browser.")
@click.option("--no-prompt", is_flag=True, help="Use defaults instead of asking for params.")
@click.option("--skip-skill", is_flag=True, help="Do not (re)install the skill and CLAUDE.md.")
@click.option("--claude-bin", default=None, type=click.Path(dir_okay=False),
              help="Path of the Claude Code CLI (default: $PNEUMA_CLAUDE_BIN, PATH, "
              "then the one bundled with claude-agent-sdk).")
@click.option("--action-timeout", type=float, default=60.0, show_default=True,
              help="Seconds to wait for the browser to answer a viewer action.")
@click.option("--agent-command", default=None, metavar='"CMD ARGS"',
              help="With --backend acp: the ACP agent's command line (remembered by the "
              "workspace for later runs).")
@click.option("--switch-mode", is_flag=True,
              help="Run a workspace of another mode with this one (its conversation is "
              "kept and resumes when you switch back).")
@_seed_option
@_param_option
def run_command(
    mode_name: str,
    workspace: Path,
    port: int,
    host: str,
    backend: str,
    model: str | None,
    permission_mode: str | None,
    no_open: bool,
    no_prompt: bool,
    skip_skill: bool,
    claude_bin: str | None,
    action_timeout: float,
    agent_command: str | None,
    switch_mode: bool,
    seed_anyway: bool,
    params: tuple[str, ...],
) -> None:
    """Open a workspace in the browser with an agent beside it."""
    from pneuma.startup.launch_stamp import current_stamp, first_answers, launch_key
    from pneuma.startup.runner import (
        PortUnavailable,
        RunOptions,
        announce,
        interrupt_on_stop_signals,
        remember_stop_signals,
        run,
        stop_signalled,
    )
    from pneuma.startup.streams import guard_standard_streams

    # The terminal or supervisor may go away at any moment: a message to
    # a stream nobody reads, or its SIGHUP, must still end in a clean stop.
    guard_standard_streams()
    interrupt_on_stop_signals()
    provided = _parse_params(params)
    _check_permission_mode(backend, permission_mode)
    if agent_command is not None:  # (the quick start imports nothing more)
        _use_agent_command(backend, agent_command)
    _claim_workspace(workspace, mode_name, switch_mode)
    if host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"[pneuma] warning: binding {host} lets other machines reach this agent; "
                   "they still need the token.", err=True)
    options = RunOptions(
        mode=None,
        mode_name=mode_name,
        workspace=workspace,
        params={},
        host=host,
        port=port,
        backend=backend,
        model=model,
        permission_mode=permission_mode,
        claude_bin=claude_bin,
        open_browser=not no_open,
        action_timeout=action_timeout,
    )
    key = launch_key(mode=mode_name, backend=backend, params=provided, skip_skill=skip_skill)
    announced = None
    try:
        # When the last start's checks saw exactly these files, the ready
        # line goes out first and the same checks run while the browser
        # comes up (pneuma.startup.launch_stamp), its first requests answered
        # meanwhile from what the stamp recorded; otherwise they run first.
        stamp = current_stamp(workspace, key)
        if stamp is not None:
            announced = announce(options)
            announced.serve_early(first_answers(stamp), options.action_timeout)
            announced.publish(options.open_browser)
        options.mode, options.params = _start_checks(
            mode_name, workspace, backend, provided, no_prompt, skip_skill, key, switch_mode,
            claude_bin, seed_anyway)
        if stop_signalled():  # its interrupt was swallowed somewhere in the checks
            raise KeyboardInterrupt
        # The server passes the manifest's mode to the backend as if asked
        # for: the backend settles its choice here (Claude Code's for root).
        options.permission_mode = _agent_notices(backend, options.mode, permission_mode)
        if announced is None:
            announced = announce(options)
            # Checked just now: the same first answers serve the browser
            # while the server is imported.
            announced.serve_early(_first_answers(options.mode, options.params, backend),
                                  options.action_timeout)
            announced.publish(options.open_browser)
        # From the ready line on, a stop signal is remembered until the
        # server's loop handles it (runner.run): raised here, as an interrupt,
        # it could come out between this block and run() as click's "Aborted!".
        remember_stop_signals()
    except PortUnavailable as exc:
        _fail(str(exc), 2)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP during the checks: nothing to save yet
        if announced is not None:
            click.echo("[pneuma] stopping…", err=True)
            announced.save_unserved()
        sys.exit(0)
    sys.exit(run(options, announced))


def _claim_workspace(workspace: Path, mode_name: str, switch_mode: bool,
                     create: bool = False) -> None:
    """pneuma.startup.start_checks.claim_workspace, ending the command on a problem."""
    from pneuma.startup.start_checks import StartProblem, claim_workspace

    try:
        claim_workspace(workspace, mode_name, switch_mode, create, _echo_notice)
    except StartProblem as exc:
        _fail(exc.message, exc.code)


def _use_agent_command(backend: str, agent_command: str) -> None:
    """--agent-command reaches the ACP backend through the environment
    (pneuma/agents/acp/command.py checks it)."""
    from pneuma.agents.acp.command import take_option
    from pneuma.core.errors import ToolError

    try:
        take_option(backend, agent_command)
    except ToolError as exc:
        _fail(exc.message, 2)


def _check_permission_mode(backend: str, permission_mode: str | None) -> None:
    if permission_mode is None:
        return  # and the quick start imports nothing more
    from pneuma.startup.start_checks import StartProblem, check_permission_mode

    try:
        check_permission_mode(backend, permission_mode)
    except StartProblem as exc:
        _fail(exc.message, exc.code)


def _agent_notices(backend: str, mode: Any, permission_mode: str | None) -> str | None:
    from pneuma.startup.start_checks import agent_notices

    return agent_notices(backend, mode, permission_mode, _echo_notice)


def _start_checks(
    mode_name: str,
    workspace: Path,
    backend: str,
    provided: dict[str, str],
    no_prompt: bool,
    skip_skill: bool,
    key: dict[str, Any],
    switch_mode: bool = False,
    claude_bin: str | None = None,
    seed_anyway: bool = False,
) -> tuple[Any, dict[str, Any]]:
    """pneuma.startup.start_checks.start_checks for `pneuma run`: a problem ends
    the command with its message and status."""
    from pneuma.startup.start_checks import StartProblem, start_checks

    try:
        return start_checks(mode_name, workspace, backend, provided,
                            prompt=_prompter(no_prompt), skip_skill=skip_skill, key=key,
                            switch_mode=switch_mode, notify=_echo_notice,
                            claude_bin=claude_bin, confirm=_confirmer(no_prompt),
                            seeding="always" if seed_anyway else "ask")
    except StartProblem as exc:
        _fail(exc.message, exc.code)
    raise AssertionError("unreachable")  # _fail exits


def _first_answers(mode: Any, values: dict[str, Any], backend: str) -> Any:
    from pneuma.startup.start_checks import first_answers

    return first_answers(mode, values, backend)


# --- pneuma open (the launcher) ---


@cli.command("open")
@click.argument("shared_file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--workspace", "-w", "into", type=click.Path(path_type=Path), default=None,
              help="With FILE.html: the new workspace's folder (default: beside the file).")
@click.option("--turn", type=click.IntRange(0), default=None,
              help="With FILE.html: the files as of this turn (default: the last).")
@click.option("--json", "as_json", is_flag=True, help="With FILE.html: say what was made as JSON.")
@click.option("--port", type=click.IntRange(0, 65535), default=17000, show_default=True,
              help="First port to try; the next free one is used if it is taken (0: any).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Anything but loopback exposes the agents to your network.")
@click.option("--no-open", is_flag=True, help="Do not open the browser.")
@click.option("--backend", default="claude-code", show_default=True,
              help="Default agent backend of the workspaces it opens (see `pneuma backends`).")
@click.option("--claude-bin", default=None, type=click.Path(dir_okay=False),
              help="Path of the Claude Code CLI (as for `pneuma run`).")
@click.option("--model", default=None, help="Model for the agents.")
@click.option("--permission-mode",
              type=click.Choice(["default", "acceptEdits", "bypassPermissions", "plan"]),
              default=None, help="Override each mode's agent.permissionMode.")
def open_command(shared_file: Path | None = None, into: Path | None = None,
                 turn: int | None = None, as_json: bool = False,
                 port: int = 17000, host: str = "127.0.0.1", no_open: bool = False,
                 backend: str = "claude-code", claude_bin: str | None = None,
                 model: str | None = None, permission_mode: str | None = None) -> None:
    """Open the launcher: the modes, your recent workspaces, new ones; one
    process serves every workspace you open from it. With FILE.html (a
    shared file): make a new workspace from it instead (docs/sharing.md)."""
    if shared_file is not None:
        from pneuma.cli.open_shared import open_shared_file

        open_shared_file(shared_file, into, turn, backend, as_json)
        return
    if into is not None or turn is not None or as_json:
        _fail("-w, --turn and --json go with a shared file: pneuma open FILE.html", 2)
    from pneuma.launcher.hosting import AgentDefaults
    from pneuma.launcher.main import LauncherOptions, run_launcher
    from pneuma.startup.runner import find_backend, interrupt_on_stop_signals
    from pneuma.startup.streams import guard_standard_streams

    guard_standard_streams()
    interrupt_on_stop_signals()
    try:
        try:
            find_backend(backend)
        except LookupError as exc:
            _fail(str(exc), 2)
        from pneuma.startup.backends import unusable_warning

        warning = unusable_warning(backend, claude_bin)
        if warning is not None:  # its workspaces still open; the dialog can pick another
            _echo_notice(f"warning: {warning}")
        _check_permission_mode(backend, permission_mode)
        if host not in ("127.0.0.1", "localhost", "::1"):
            click.echo(f"[pneuma] warning: binding {host} lets other machines reach the "
                       "launcher and its agents; they still need the tokens.", err=True)
    except KeyboardInterrupt:
        sys.exit(0)
    agent = AgentDefaults(backend=backend, claude_bin=claude_bin, model=model,
                          permission_mode=permission_mode)
    sys.exit(run_launcher(LauncherOptions(host=host, port=port, open_browser=not no_open,
                                          agent=agent)))


# --- pneuma tool / pneuma mcp ---

_tool_options = [
    click.option("--mode", "mode_name", required=True, help="Mode name (see `pneuma modes`)."),
    _workspace_option,
    click.option("--policies", "policies_file", default=None,
                 type=click.Path(dir_okay=False, path_type=Path),
                 help="Policy file (default: W/.pneuma/<mode>-policies.json if present)."),
    click.option("--enable-exec", is_flag=True, help="Turn on command execution tools."),
    click.option("--enable-browser", is_flag=True, help="Turn on browser tools."),
]


def _with_tool_options(function):
    for option in reversed(_tool_options):
        function = option(function)
    return function


@cli.command("tool")
@_with_tool_options
@click.option("--list", "list_only", is_flag=True,
              help="Print the enabled tools with their schemas instead of calling one.")
@click.argument("name", required=False)
@click.argument("args_json", required=False, default="{}", metavar="['<json>'|-]")
def tool_command(mode_name: str, workspace: Path, policies_file: Path | None,
                 enable_exec: bool, enable_browser: bool, list_only: bool,
                 name: str | None, args_json: str) -> None:
    """Call one of a mode's tools and print its JSON result (exit 1 on a tool
    error). ARGS is a JSON object, or '-' to read it from stdin."""
    from pneuma.core.errors import ToolError
    from pneuma.tools.runtime import ToolRuntime

    mode = _load_mode(mode_name)
    refuse_missing_workspace(workspace)
    try:
        runtime = ToolRuntime(mode, workspace, policies_file=policies_file,
                              enable_exec=enable_exec, enable_browser=enable_browser)
        if list_only or name is None:
            tools = [{"name": s.name, "description": s.description,
                      "inputSchema": s.input_schema, "outputSchema": s.output_schema}
                     for s in runtime.enabled_specs()]
            click.echo(json.dumps({"tools": tools}, indent=2, ensure_ascii=False))
            return
        raw = sys.stdin.read() if args_json == "-" else args_json
        try:
            args = json.loads(raw) if raw.strip() else {}
        except ValueError as exc:
            raise ToolError("E_BAD_ARGS", f"the arguments are not valid JSON: {exc}",
                            details={"field": "(root)"}) from None
        result = runtime.call(name, args)
    except ToolError as exc:
        result = exc.to_dict()
    click.echo(json.dumps(result, indent=2, ensure_ascii=False))
    if "error" in result and len(result) == 1:
        sys.exit(1)


@cli.command("mcp")
@_with_tool_options
def mcp_command(mode_name: str, workspace: Path, policies_file: Path | None,
                enable_exec: bool, enable_browser: bool) -> None:
    """Serve a mode's tools to an MCP client over stdio."""
    import logging

    from pneuma.core.errors import ToolError
    from pneuma.tools import mcp_server
    from pneuma.tools.runtime import ToolRuntime

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="[pneuma mcp] %(levelname)s %(name)s: %(message)s")
    mode = _load_mode(mode_name)
    refuse_missing_workspace(workspace)
    runtime = ToolRuntime(mode, workspace, policies_file=policies_file,
                          enable_exec=enable_exec, enable_browser=enable_browser)
    try:
        runtime.policies()  # a broken policy file is reported now, not on every call
    except ToolError as exc:
        _fail(exc.message, 2)
    mcp_server.run(runtime)


# --- pneuma checkpoints (pneuma/cli/checkpoints.py) ---

cli.add_command(checkpoints)
cli.add_command(conversations)  # pneuma/cli/conversations.py
cli.add_command(backends)  # pneuma/startup/backends.py
cli.add_command(export_command)  # pneuma/cli/export.py (each mode's exporter)
cli.add_command(new_mode_command)  # pneuma/cli/new_mode_command.py
cli.add_command(modes)  # pneuma/cli/modes_command.py (the installed modes and their sources)
cli.add_command(mode)  # pneuma/cli/mode_command.py (modes from anywhere)
cli.add_command(publish_command)  # pneuma/cli/publish.py (the person's publish targets)
cli.add_command(share_command)  # pneuma/cli/share.py (one self-contained HTML file)


if __name__ == "__main__":  # pragma: no cover
    main()
