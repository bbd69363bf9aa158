"""What making a workspace of a folder would write, before anything is.

A non-empty folder that is not yet a workspace becomes one only when the
person has seen this list in the launcher's page and said yes
(docs/launcher.md, "New workspace in a folder that has files"). The list
comes from the same code that will write: the skill installer's own dry
run (``pneuma.workspace.skill.plan_install``) and the mode's seed files as
``pneuma.workspace.params.seed_workspace`` picks them (only into a folder
without the mode's content, never over an existing name).

``PlannedWrites.digest`` names this exact list; the page sends it back as
``confirm``, and a folder that changed meanwhile (so the list would differ)
is asked about again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pneuma.host.modes import LoadedMode

STATE_DIR = ".pneuma"


@dataclass(frozen=True)
class PlannedWrite:
    path: str  # relative to the workspace; a folder ends with "/"
    action: str  # "create" | "change" | "delete"
    what: str  # why, in a few words
    files: int = 1  # a folder stands for this many files

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "action": self.action, "what": self.what,
                "files": self.files}


@dataclass
class PlannedWrites:
    writes: list[PlannedWrite] = field(default_factory=list)

    @property
    def digest(self) -> str:
        listing = [[w.path, w.action, w.files] for w in self.writes]
        return hashlib.sha256(json.dumps(listing).encode("utf-8")).hexdigest()[:32]

    def to_json(self) -> list[dict[str, Any]]:
        return [w.to_json() for w in self.writes]


def planned_seed_files(mode: LoadedMode, workspace: Path) -> list[str]:
    """The seed files ``seed_workspace`` would copy into ``workspace`` now."""
    from pneuma.workspace.params import has_content, seed_files

    if has_content(mode, workspace):
        return []
    targets = [target for _source, target in seed_files(mode)]
    return [rel for rel in targets if not os.path.lexists(workspace / rel)]


def _grouped(rel: str, skill_root: str) -> str | None:
    """The folder an installer path is listed under, if it is listed as one."""
    if rel.startswith(skill_root + "/"):
        return skill_root + "/"
    if PurePosixPath(rel).parts[0] == STATE_DIR:
        return STATE_DIR + "/"
    return None


def plan_writes(mode: LoadedMode, workspace: Path, params: Mapping[str, Any],
                instruction_files: tuple[str, ...] = ()) -> PlannedWrites:
    """Everything a first start of ``mode`` in ``workspace`` would write,
    one line per file, the skill folder and ``.pneuma/`` as one line each."""
    from pneuma.workspace.skill import plan_install

    plan = PlannedWrites()
    for rel in planned_seed_files(mode, workspace):
        plan.writes.append(PlannedWrite(rel, "create", "the mode's starting file"))
    skill_root = f".claude/skills/{mode.manifest.skill.install_name}"
    folders: dict[str, int] = {}
    for change in plan_install(mode, workspace, params,
                               instruction_files=instruction_files).changes:
        group = _grouped(change.path, skill_root)
        if group is not None:
            folders[group] = folders.get(group, 0) + 1
            continue
        exists = os.path.lexists(workspace / change.path)
        action = "delete" if change.content is None else "change" if exists else "create"
        plan.writes.append(PlannedWrite(change.path, action, change.reason))
    skill_folder = skill_root + "/"
    if skill_folder in folders:
        exists = os.path.lexists(workspace / skill_root)
        plan.writes.append(PlannedWrite(skill_folder, "change" if exists else "create",
                                        "the mode's skill for the agent",
                                        folders[skill_folder]))
    # Pneuma's own state: the conversation, checkpoints, settings, the lock.
    exists = os.path.lexists(workspace / STATE_DIR)
    # (its file count is not listed: the session adds files there as it runs)
    plan.writes.append(PlannedWrite(STATE_DIR + "/", "change" if exists else "create",
                                    "Pneuma's own state: conversation, checkpoints, settings"))
    plan.writes.sort(key=lambda w: w.path)
    return plan
