"""One publish, as ``pneuma publish`` and the Export menu's "Publish" both
do it: the person's target by name, its publisher by the target's kind,
the folder to publish built in a temporary folder, handed over, removed."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pluggy

from pneuma.host.exporters import all_exporters
from pneuma.host.publishers import (
    PublishError,
    PublishRequest,
    PublishResult,
    all_publishers,
)
from pneuma.publish.source import BuiltSource, build_export, build_share, choose_format
from pneuma.publish.targets import Target, read_targets, targets_file


@dataclass(frozen=True)
class Published:
    """A publish done: the publisher's result, the target, what was
    published ("html (3 slides)") and the warnings of building it."""

    result: PublishResult
    target: Target
    what: str
    warnings: tuple[str, ...]


def find_target(name: str, path: Path | None = None) -> Target:
    targets = read_targets(path)
    if name in targets:
        return targets[name]
    where = path or targets_file()
    known = ", ".join(targets) or "none yet"
    raise PublishError(f"no publish target named {name!r} in {where} (targets: {known})",
                       code="E_NOT_FOUND",
                       hint=f"add a [targets.{name}] table to {where} (docs/sharing.md, "
                            "\"Publish\")")


def publish_workspace(pm: pluggy.PluginManager, workspace: Path, mode: str, target_name: str, *,
                      format_name: str | None = None, share: bool = False,
                      message: str | None = None, params: Mapping[str, Any] | None = None,
                      targets_path: Path | None = None, conversation: str | None = None,
                      secrets: Sequence[str] = ()) -> Published:
    """Build what the workspace publishes (its site, ``format_name``, or with
    ``share`` the shared file of ``conversation``, ``secrets`` scrubbed) and
    publish it to the target; ``PublishError`` says in one line why not."""
    target = find_target(target_name, targets_path)
    publishers = all_publishers(pm)
    publisher = publishers.get(target.kind)
    if publisher is None:
        raise PublishError(f"the target {target.name!r} is of kind {target.kind!r}, which no "
                           f"installed publisher serves (kinds: {', '.join(publishers)})",
                           code="E_BAD_ARGS")
    workspace = workspace.resolve()
    with tempfile.TemporaryDirectory(prefix="pneuma-publish-") as tmp:
        folder = Path(tmp) / "site"
        built: BuiltSource
        if share:
            built = build_share(workspace, folder, mode=mode, conversation=conversation,
                                secrets=secrets)
        else:
            exporter = all_exporters(pm).get(mode)
            chosen = choose_format(exporter, mode, format_name)
            assert exporter is not None  # choose_format refused a mode without one
            built = build_export(exporter, chosen, workspace, folder, dict(params or {}))
        text = message or f"Publish {workspace.name}: {built.what}, from Pneuma"
        result = publisher.publish(PublishRequest(built.folder, target.settings, text))
    return Published(result, target, built.what, built.warnings)
