"""Checks that run after every turn (issue 28, item 5), as plugins declare
them through ``register_turn_checks``.

A turn ends; the host runs the workspace mode's checks on the files the
turn changed, headlessly, on a bounded pool (docs/checks.md): a slide
deck's content overflow, a document's broken links, a diagram that no
longer parses. Each check returns the ``Problem`` items it found, each
naming the file and line (or the viewer's spot, ``locate``) where it is;
the chat shows the turn's badge, and with the workspace's "repair" setting
on, one follow-up turn hands the agent the problems.

A check is a plain function ``run(request) -> [Problem, ...]``: it is
called in a worker thread with a time budget, so it may block (parse a
file, start Node); it must not write to the workspace. A check that needs
a rendered page (``needs_page=True``) gets ``request.page``, a handle on
the session's viewer (the person's tab, or the headless viewer the agent
uses without a tab) and on the server's URLs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import pluggy

log = logging.getLogger(__name__)

Severity = Literal["error", "warning"]
# A string, or one per language: {"en": "Content overflow", "zh-CN": "内容溢出"}.
Label = str | Mapping[str, str]


@dataclass(frozen=True)
class Problem:
    """One thing a check found wrong after a turn.

    ``message``: what is wrong, in English (the agent reads it in a repair
    turn). ``file``: the workspace-relative POSIX path it is in, or None.
    ``line``: 1-based line in ``file``, or None. ``severity``: ``error``
    (the turn's badge fails) or ``warning`` (shown, does not fail it).
    ``locate``: what the mode's viewer needs to show the spot (as a
    ``Change``'s ``locate``), or None.
    """

    message: str
    file: str | None = None
    line: int | None = None
    severity: Severity = "error"
    locate: Mapping[str, Any] | None = None

    def to_json(self, check: str = "") -> dict[str, Any]:
        return {"message": self.message, "file": self.file, "line": self.line,
                "severity": self.severity,
                "locate": dict(self.locate) if self.locate is not None else None,
                "check": check}


class CheckPage(Protocol):
    """A check's handle on a rendered page (``TurnCheck.needs_page``).

    ``viewer_action`` runs one of the mode's viewer actions (as the agent's
    ``POST /api/viewer/action`` does) in the person's tab or, with none
    open, in the headless viewer, and returns the viewer's answer; callable
    from the check's worker thread. ``api_url`` is the server's base URL
    (``http://127.0.0.1:PORT``), ``token`` its access token, and
    ``content_url`` the origin that serves the workspace's own pages (a
    preview's scripts run there), or None when the mode has none.
    """

    api_url: str
    token: str
    content_url: str | None

    def viewer_action(self, action_id: str, params: Mapping[str, Any] | None = None,
                      timeout: float | None = None) -> dict[str, Any]: ...


@dataclass(frozen=True)
class CheckRequest:
    """What one check gets: the workspace (an absolute path; read it, do not
    write it), the files the turn changed (workspace-relative POSIX paths,
    sorted; deleted files are not listed), the mode's init params, the
    mode's name, ``page`` when the check asked for one, and ``budget_s``,
    the seconds the check has before it is reported "timed out" (give a
    subprocess a shorter timeout than that)."""

    workspace: Path
    changed: tuple[str, ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    mode: str = ""
    page: CheckPage | None = None
    budget_s: float = 20.0

    def changed_with_suffix(self, *suffixes: str) -> list[str]:
        """The changed files whose names end with one of ``suffixes``
        (``".md"``), compared without case."""
        wanted = tuple(s.lower() for s in suffixes)
        return [p for p in self.changed if p.lower().endswith(wanted)]


CheckFn = Callable[[CheckRequest], Sequence[Problem]]


@dataclass(frozen=True)
class TurnCheck:
    """One check a mode runs after every turn.

    ``mode``: the mode it checks. ``name``: short and unique within the
    mode (``"overflow"``), recorded with each problem. ``label``: what the
    page shows (a string or ``{"en": …, "zh-CN": …}``). ``run(request) ->
    [Problem, ...]``: an empty list when all is well; an exception is
    reported as the check's error, never raised to the person.
    ``needs_page``: the check drives a rendered page (``request.page``).
    """

    mode: str
    name: str
    label: Label
    run: CheckFn
    needs_page: bool = False


def all_checks(pm: pluggy.PluginManager) -> dict[str, list[TurnCheck]]:
    """Every plugin's checks by mode, in registration order; a second check
    of the same mode and name is ignored (logged)."""
    found: dict[str, list[TurnCheck]] = {}
    for answer in pm.hook.register_turn_checks():
        for check in answer or []:
            if not isinstance(check, TurnCheck):
                log.warning("register_turn_checks returned %r, not a TurnCheck", check)
                continue
            checks = found.setdefault(check.mode, [])
            if any(c.name == check.name for c in checks):
                log.warning("a second turn check %r for mode %r is ignored", check.name, check.mode)
                continue
            checks.append(check)
    return found


def checks_for(pm: pluggy.PluginManager, mode: str) -> list[TurnCheck]:
    """The checks of one mode (an empty list when it declares none)."""
    return all_checks(pm).get(mode, [])
