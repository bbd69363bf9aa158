"""What must hold before a workspace is served, for `pneuma run` and the
launcher alike (no click here).

Each check raises ``StartProblem`` with the one line the person reads
(`pneuma run` prints it as ``pneuma: error: …`` and exits with its
``code``; the launcher answers it as an E_* error). Lines that are only
worth telling (a seeded workspace, a skill warning, a broken deck) go to
``notify``, without the ``[pneuma] `` prefix: the caller adds its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

Notify = Callable[[str], None]


class StartProblem(Exception):
    """A reason not to serve the workspace; ``str()`` is the one line to show."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def _ignore(line: str) -> None:
    pass


def load_mode(name: str, *, schema_cache: bool = True) -> Any:
    """The mode called ``name``. Tool schemas known valid from an earlier run
    are not re-checked (start-up time); ``pneuma modes`` checks everything."""
    from pneuma.host.modes import UnknownModeError
    from pneuma.host.registry import get_mode

    try:
        return get_mode(name, schema_cache=schema_cache)
    except UnknownModeError as exc:
        raise StartProblem(str(exc)) from None


def check_permission_mode(backend: str, permission_mode: str | None) -> None:
    """A permission mode the backend's agent would refuse only in the page
    is refused here, with the fix (``BackendSpec.permission_problem``)."""
    if permission_mode is None:
        return  # and the quick start looks nothing up
    from pneuma.startup.runner import find_backend

    try:
        spec = find_backend(backend)
    except LookupError:
        return  # the backend check says so, with the installed ones
    problem = spec.permission_problem(permission_mode) if spec.permission_problem else None
    if problem:
        raise StartProblem(problem)


def folder_problem(folder: Path, what: str = "workspace folder") -> str | None:
    """Why ``folder`` cannot be (or be made) a folder, said before anything
    is written: it is a file, or a file stands where one of its parents
    should be (``-w afile/sub``)."""
    if folder.is_dir():
        return None
    if folder.exists():
        return f"the {what} {folder} is a file"
    for parent in folder.parents:
        if parent.is_dir():
            return None
        if parent.exists():
            return f"cannot create the {what} {folder}: {parent} is a file"
    return None


def make_folder(folder: Path, what: str = "workspace folder") -> None:
    """Create ``folder`` (and its parents), or raise ``StartProblem`` saying
    why not in one line (a file in the way, a read-only file system)."""
    problem = folder_problem(folder, what)
    if problem is not None:
        raise StartProblem(problem)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StartProblem(f"cannot create the {what} {folder}: {exc.strerror or exc}") from None


def refuse_unsafe_state(workspace: Path) -> None:
    """A ``.pneuma/`` that is a link or holds one (a shared zip or the
    agent's shell can plant them) is refused before anything opens it."""
    from pneuma.core.state_files import UnsafeStatePath, audit_state_dir

    problem = folder_problem(workspace)
    if problem is not None:
        raise StartProblem(problem)
    try:
        audit_state_dir(workspace)
    except UnsafeStatePath as exc:
        raise StartProblem(str(exc)) from None
    except OSError as exc:
        raise StartProblem(f"cannot read {workspace / '.pneuma'}: {exc.strerror or exc}") from None


def claim_workspace(workspace: Path, mode_name: str, switch_mode: bool, create: bool = False,
                    notify: Notify = _ignore) -> None:
    """Before anything is written: the workspace is served by no other
    process, and belongs to this mode (or the switch was asked for).

    Called first with ``create=False``: a workspace that has a ``.pneuma/``
    is locked before any ready line; one that has none yet is locked by
    the second call, from the checks, once the backend and mode are known
    good and just before the first file is written."""
    from pneuma.core.state_files import UnsafeStatePath
    from pneuma.startup.workspace_lock import WorkspaceBusy, acquire, holds

    if holds(workspace):  # claimed by the first call
        return
    refuse_unsafe_state(workspace)
    try:
        if not acquire(workspace, create=create):
            return
    except WorkspaceBusy as exc:
        raise StartProblem(str(exc)) from None
    except UnsafeStatePath as exc:
        raise StartProblem(str(exc)) from None
    except OSError as exc:
        raise StartProblem(f"cannot lock {workspace}: {exc.strerror or exc}") from None
    settle_mode(workspace, mode_name, switch_mode, notify)


def settle_mode(workspace: Path, mode_name: str, switch_mode: bool,
                notify: Notify = _ignore) -> None:
    """A workspace of another mode is refused unless ``switch_mode`` asks
    for the switch, which parks the other mode's conversation (the same
    for `pneuma run`, `init` and `skill install`)."""
    from pneuma.workspace.mode_switch import switch_refusal, switch_sessions

    if not switch_mode:
        refusal = switch_refusal(workspace, mode_name)
        if refusal is not None:
            raise StartProblem(refusal)
        return
    try:
        previous = switch_sessions(workspace, mode_name)
    except OSError as exc:
        raise StartProblem(f"cannot switch {workspace} to the {mode_name} mode: {exc}") from None
    if previous is not None:
        notify(f"switched {workspace} from the {previous} mode to {mode_name}; "
               f"`pneuma run --mode {previous} --switch-mode` resumes its conversation")


Seeding = Literal["ask", "always", "never-beside"]
"""How starter files go into a folder that holds files of the person's own
(``seeding_question``): ``ask`` (``confirm``, or refuse with the way out
when there is nobody to ask), ``always`` (``--seed``, or the launcher,
whose dialog showed the files first), ``never-beside`` (seed nothing
there and go on: `pneuma skill install`, whose work is the skill)."""

SEED_WAY_OUT = ("name an empty or new folder with --workspace, or pass --seed "
                "to seed here anyway")


def prepare_workspace(mode_name: str, workspace: Path, params: Mapping[str, Any],
                      prompt: Any = None, notify: Notify = _ignore,
                      record: bool = False, seeding: Seeding = "ask",
                      confirm: Callable[[str], bool] | None = None) -> tuple[Any, dict[str, Any]]:
    """Seed the workspace and settle its params (``prompt`` asks for a
    missing one; without it a param with no default is a problem);
    ``record``: record its mode too (`pneuma init`); ``seeding`` and
    ``confirm``: what to do in a folder of other files (``Seeding``)."""
    from pneuma.workspace.params import WorkspaceError, init_workspace

    mode = load_mode(mode_name)
    make_folder(workspace)
    seed = settle_seeding(mode, workspace, seeding, confirm)
    try:
        result = init_workspace(mode, workspace, params, prompt=prompt, record=record, with_seeds=seed)
    except WorkspaceError as exc:
        raise StartProblem(str(exc)) from None
    except OSError as exc:  # a full disk, a read-only file system
        raise StartProblem(f"cannot prepare the workspace {workspace}: "
                           f"{exc.strerror or exc}") from None
    if result.seeded:
        notify(f"seeded {len(result.seeded)} file(s) from the {mode.name} mode into {workspace}")
    return mode, result.params


def switched_seeding(seeding: Seeding, switch_mode: bool) -> Seeding:
    """``--switch-mode`` hands a workspace of another mode to this one on
    purpose: its starter files join the other mode's without a question."""
    return "always" if switch_mode and seeding == "ask" else seeding


def settle_seeding(mode: Any, workspace: Path, seeding: Seeding,
                   confirm: Callable[[str], bool] | None) -> bool:
    """Whether to seed ``workspace``: yes when it is empty or of this mode;
    in a folder of the person's own files as ``seeding`` says."""
    from pneuma.workspace.params import seed_files, seeding_question

    try:
        theirs = seeding_question(mode, workspace)
    except OSError as exc:
        raise StartProblem(f"cannot read the workspace {workspace}: {exc.strerror or exc}") from None
    if not theirs or seeding == "always":
        return True
    if seeding == "never-beside":
        return False
    shown = ", ".join(theirs[:3]) + (f" and {len(theirs) - 3} more" if len(theirs) > 3 else "")
    files = "1 file" if len(theirs) == 1 else f"{len(theirs)} files"
    what = f"{workspace.resolve()} holds {files} ({shown}) and none of the {mode.name} mode's"
    if confirm is None:
        raise StartProblem(f"{what}: starter files are seeded only into an empty folder; "
                           f"{SEED_WAY_OUT}")
    if not confirm(f"{what}. Seed the {mode.name} mode's {len(seed_files(mode))} starter "
                   "files beside them?"):
        raise StartProblem(f"nothing seeded into {workspace}; {SEED_WAY_OUT}", code=1)
    return True


def install_skill(mode: Any, workspace: Path, values: dict[str, Any], notify: Notify = _ignore,
                  **options: Any) -> Any:
    """Install (or with ``check=True`` compare) the mode's skill; warnings
    go to ``notify``."""
    from pneuma.core.state_files import UnsafeStatePath
    from pneuma.workspace.claude_md import MarkerError
    from pneuma.workspace.skill import SkillInstallError
    from pneuma.workspace.skill import install_skill as install

    try:
        result = install(mode, workspace, values, **options)
    except (MarkerError, SkillInstallError, UnsafeStatePath) as exc:
        raise StartProblem(str(exc)) from None
    for warning in result.warnings:
        notify(f"warning: {warning}")
    return result


def start_checks(
    mode_name: str,
    workspace: Path,
    backend: str,
    provided: Mapping[str, Any],
    *,
    prompt: Any = None,
    skip_skill: bool = False,
    key: dict[str, Any] | None = None,
    switch_mode: bool = False,
    notify: Notify = _ignore,
    claude_bin: str | None = None,
    agent_env: Mapping[str, str] | None = None,
    seeding: Seeding = "ask",
    confirm: Callable[[str], bool] | None = None,
) -> tuple[Any, dict[str, Any]]:
    """Everything to make sure of before serving: the backend and mode
    exist and agree, the workspace is locked, seeded with its params, the
    skill is installed. Raises ``StartProblem`` when one fails; records
    the launch stamp (``key``) when all pass."""
    from pneuma.startup.launch_stamp import checked_paths, write_stamp
    from pneuma.workspace.manifest_file import manifest_file_problem

    check_backend_choice(load_mode(mode_name), backend, workspace, claude_bin, notify, agent_env)
    make_folder(workspace)
    # Asked before the claim writes .pneuma/: a "no" leaves the folder as it was.
    seed = settle_seeding(load_mode(mode_name), workspace,
                          switched_seeding(seeding, switch_mode), confirm)
    claim_workspace(workspace, mode_name, switch_mode, create=True, notify=notify)
    mode, values = prepare_workspace(mode_name, workspace, provided, prompt, notify,
                                     seeding="always" if seed else "never-beside")
    if not skip_skill:
        # Usually nothing changed since the last run: the fingerprint says so
        # without rendering anything.
        install_skill(mode, workspace, values, notify, reuse_fingerprint=True,
                      instruction_files=backend_instruction_files(backend))
    if key is not None:
        write_stamp(workspace, key, checked_paths(mode, workspace),
                    first=first_answers(mode, values, backend).to_json())
    # Not a reason to refuse the start (the agent can fix it), but the
    # terminal must say so, not only the page.
    problem = manifest_file_problem(mode, workspace)
    if problem is not None:
        notify(f"warning: {problem}; the viewer shows nothing until it is fixed")
    return mode, values


def backend_instruction_files(backend: str) -> tuple[str, ...]:
    """The files besides CLAUDE.md the backend's agent reads (AGENTS.md for
    Codex), which the skill installer also gives the marker sections."""
    from pneuma.startup.backends import installed_backends

    for spec, _plugin in installed_backends():
        if spec.name == backend:
            return tuple(spec.instruction_files)
    return ()


def mode_allows_backend(mode: Any, backend: str) -> bool:
    """A manifest's ``supportedBackends`` is the whole list when it is
    given; left out, every installed backend is allowed (a backend a
    plugin adds later included)."""
    manifest = mode.manifest
    return backend in manifest.supported_backends or (
        "supported_backends" not in manifest.model_fields_set)


def check_backend_choice(mode: Any, backend: str, workspace: Path | None = None,
                         claude_bin: str | None = None, notify: Notify = _ignore,
                         agent_env: Mapping[str, str] | None = None) -> None:
    """The backend is installed and the mode supports it, or a
    ``StartProblem`` says which are (and which of those work now); one
    that is chosen but cannot work now (no binary, no key) is a warning
    naming what is missing and the usable ones: the page would show the
    same, and fixing the environment is enough. ``agent_env`` is what the
    agent gets on top of this process's environment: checked with it."""
    from pneuma.startup.backends import (
        BackendState,
        backend_states,
        check_backend,
        check_context,
        installed_backends,
        unusable_line,
    )

    context = check_context(agent_environment(agent_env), workspace=workspace,
                            claude_bin=claude_bin, version=False)
    installed = {spec.name: (spec, plugin) for spec, plugin in installed_backends()}
    if backend not in installed:
        raise StartProblem(f"no backend named '{backend}' (installed: "
                           f"{', '.join(sorted(installed))}; `pneuma backends` says which "
                           "work now)")
    supported = mode.manifest.supported_backends
    if not mode_allows_backend(mode, backend):
        usable = [state.name for state in backend_states(context, supported)
                  if state.status.usable]
        now = (f"usable now: {', '.join(usable)}" if usable
               else "none of them is usable now: see `pneuma backends`")
        raise StartProblem(f"the {mode.name} mode does not support --backend {backend}; it "
                           f"supports {', '.join(supported)} ({now})")
    # Only the chosen backend is checked on the way to the ready line; the
    # others only when one must be suggested instead.
    spec, plugin = installed[backend]
    chosen = BackendState(spec, plugin, check_backend(spec, context))
    if not chosen.status.usable:
        others = backend_states(context, [name for name in installed if name != backend
                                          and mode_allows_backend(mode, name)])
        notify(f"warning: {unusable_line(chosen, others)}")


def agent_environment(agent_env: Mapping[str, str] | None) -> dict[str, str]:
    """The environment the agent runs with: this process's, and ``agent_env`` over it."""
    import os

    return {**os.environ, **(agent_env or {})}


def agent_notices(backend: str, mode: Any, permission_mode: str | None,
                  notify: Notify = _ignore) -> str | None:
    """The backend's lines for what would otherwise surface only in the
    page (``BackendSpec.start_notices``; missing credentials are told by
    ``check_backend_choice``). Returns the permission mode to run with
    (None: the mode's own)."""
    from pneuma.startup.runner import find_backend

    try:
        spec = find_backend(backend)
    except LookupError:
        return permission_mode
    if spec.start_notices is None:
        return permission_mode
    return spec.start_notices(mode, permission_mode, notify)


def first_answers(mode: Any, values: dict[str, Any], backend: str) -> Any:
    """What the early server of the next warm start answers with: the
    manifest, params and backend's browser module exactly as ``/api/config``
    shows them."""
    from pneuma.server.early_server import FirstAnswers
    from pneuma.startup.runner import find_backend
    from pneuma.workspace.params import redact_params

    try:
        backend_module = find_backend(backend).browser_module
    except LookupError:
        backend_module = None
    return FirstAnswers(mode_json=mode.manifest.to_json(), params=redact_params(mode, values),
                        static_dir=str(mode.static_dir), backend_module=backend_module)
