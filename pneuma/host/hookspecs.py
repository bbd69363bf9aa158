"""Every hook a Pneuma plugin can implement, grouped by when it is called.

A plugin is any object (usually a module) registered under the entry-point
group ``pneuma`` whose functions are decorated with ``pneuma.hookimpl``.
Each hook is documented in docs/hooks.md; a test keeps the two in step.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import click
    from aiohttp import web

    from pneuma.core.backend import BackendSpec
    from pneuma.host.exporters import Exporter
    from pneuma.host.modes import ClaudeMdSection, LoadedMode, ModeSource
    from pneuma.host.publishers import Publisher
    from pneuma.host.turn_changes import ChangeDescriber
    from pneuma.host.turn_checks import TurnCheck

# The running session's handle is a ``pneuma.api.Pneuma``; it is typed by
# name only here, since the server that makes it sits above this package.
Pneuma = Any

hookspec = pluggy.HookspecMarker("pneuma")


# --- Discovery: called when the plugin manager is asked what is installed ---


@hookspec
def register_modes() -> list[ModeSource]:
    """Return the modes this plugin provides.

    Each ``ModeSource`` carries the manifest (a mapping, or the path of a JSON
    file) and the directory of the mode's package, against which the
    manifest's ``skill.sourceDir``, ``init.seedFiles`` and ``viewer.staticDir``
    are resolved. The host validates every manifest; an invalid one is
    reported with the plugin's name and the bad field, and the other modes
    still load.

    Every plugin's answer counts (not ``firstresult``): modes come from many
    packages. Not ``historic``: modes are read when asked for, from the
    plugins registered then.
    """


@hookspec
def register_backends() -> list[BackendSpec]:
    """Return agent backends (``pneuma run --backend NAME``) this plugin provides.

    Each ``BackendSpec`` names the backend and gives a factory building it for
    one session. Names must be unique across all plugins, so every plugin's
    answer counts (not ``firstresult``).
    """


@hookspec
def register_exporters() -> list[Exporter]:
    """Return the exporters this plugin provides, one ``Exporter`` per mode.

    Each names its mode, the formats it offers (``ExportFormat``: the
    ``--format`` name, a label for the Export menu, the file suffix or
    ``""`` for a directory of files) and ``export(request) -> ExportResult``.
    ``pneuma export`` and the shell's Export menu use the exporter of the
    workspace's mode; ``ExportError`` is the one way to say it cannot.

    Every plugin's answer counts (not ``firstresult``): exporters come from
    many packages, and a plugin may export a mode it does not provide.
    """


@hookspec
def register_publishers() -> list[Publisher]:
    """Return the publishers this plugin provides, each a
    ``Publisher(name, label, publish)``.

    A publisher takes a folder of files (the host builds it: the mode's
    site, a deck's HTML, a shared file) and puts it where the person's
    target says (``publish.toml`` in their config folder; the target's
    ``kind`` names the publisher): ``publish(request) -> PublishResult``,
    ``PublishError`` the one way to say it cannot. Publishers are not per
    mode. Every plugin's answer counts (not ``firstresult``); the first
    registered wins a name.
    """


@hookspec
def register_change_describers() -> list[ChangeDescriber]:
    """Return how this plugin's modes describe a turn's changes, one
    ``ChangeDescriber`` per mode.

    Each names its mode and gives ``describe(files) -> [Change, ...]``: the
    turn's changes in the mode's terms ("Slide 3: title changed"), read
    from the checkpoint store through ``TurnFiles``; optionally ``revert``
    for a change that shares a file with others. A mode without one is
    described per file. Every plugin's answer counts (not ``firstresult``);
    the first registered wins a mode.
    """


@hookspec
def register_turn_checks() -> list[TurnCheck]:
    """Return the checks this plugin's modes run after every turn, each a
    ``TurnCheck(mode, name, label, run, needs_page=False)``.

    ``run(request) -> [Problem, ...]`` is called in a worker thread with a
    time budget, on the files the turn changed (``CheckRequest``); the
    problems make the turn's badge and, with the workspace's "repair"
    setting on, one follow-up turn for the agent. Every plugin's answer
    counts (not ``firstresult``); a mode's checks run in registration order.
    """


# --- Command line: called once while the ``pneuma`` click group is built ---


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add commands or command groups to the ``pneuma`` CLI with ``cli.add_command``.

    Called for every plugin, once, while the group is built (not
    ``historic``: a plugin registered after that adds nothing to it).
    """


# --- Serving: called while the aiohttp application for a session is built ---


@hookspec(firstresult=True)
def register_routes(pneuma: Pneuma) -> list[web.AbstractRouteDef] | None:
    """Return the HTTP routes of the mode being served (``web.get(path, handler)``, ...).

    Called only for the plugin that provides the served mode, once, while
    the server is built; ``pneuma`` is the running session (mode, workspace,
    sandbox, broadcast, viewer actions, file changes; see ``pneuma.api``).
    Handlers find it again with ``pneuma.api.pneuma_of(request)``. Routes
    sit behind the same token, Host and Origin checks as the built-in ones,
    and a ``ToolError`` raised by a handler is answered in the one error
    shape with the status its code implies.

    ``firstresult``: exactly one plugin, the mode's own, is asked, and its
    list is the answer.
    """


@hookspec
def register_session_features(pneuma: Pneuma) -> list[web.AbstractRouteDef] | None:
    """Attach a host feature to the session being served and return its
    HTTP routes (or None).

    Called for every plugin, once, while the server is built, after the
    host's own routes: a feature subscribes itself to the session's hooks
    (``pneuma.session.hooks.add(name, feature)``; docs/architecture.md,
    "Session hooks") and answers on routes under a prefix of its own. The
    server names no feature: each is a plugin of its own (the host's are
    listed in ``pneuma.host.plugins.DEFAULT_PLUGINS``).
    """


# --- Workspace: called by the skill installer ---


@hookspec
def claude_md_sections(mode: LoadedMode, workspace: Path) -> list[ClaudeMdSection]:
    """Return sections to keep in the workspace's CLAUDE.md.

    Each ``ClaudeMdSection`` has a key and a body. The key ``""`` owns the
    ``<!-- pneuma:start -->`` / ``<!-- pneuma:end -->`` markers, any other key
    ``k`` owns ``<!-- pneuma:k:start -->`` / ``<!-- pneuma:k:end -->``. Every
    section is replaced in place, independently of the others; the person's
    text outside the markers is never touched. Pneuma itself implements this
    hook for the skill section (``""``) and the viewer API section
    (``"viewer-api"``); two plugins returning the same key is an error.

    Every plugin's sections count (not ``firstresult``): the host's and the
    mode's sit side by side.
    """
