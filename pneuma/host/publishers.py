"""Publishers: where a finished result goes so that people who do not run
Pneuma can see it (``pneuma publish``, the Export menu's "Publish"), as
plugins declare them through ``register_publishers``.

A publisher is not per mode: it takes a folder of files (the webcraft site,
a deck's HTML export, a shared file), built by the host into a temporary
folder, and puts them somewhere: a branch of a git remote, a plain folder.
Where exactly is the person's own configuration (a named target in
``publish.toml`` under their config folder, never in the workspace); the
target's ``kind`` names the publisher that serves it. A ``PublishError``
becomes one line (``pneuma: error: …``) on the command line and, in the
browser, an error with the code it carries (``E_CONFLICT`` unless it says
otherwise), as with exporters (pneuma.host.exporters).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pluggy

from pneuma.core.errors import CodedError


class PublishError(CodedError):
    """The folder cannot be published to that target; the message says why
    in one line (the remote unreachable, the push rejected, a file in the
    way). ``code`` is what the browser gets (docs/errors.md): ``E_CONFLICT``
    (the default) when the target refuses as it stands, ``E_UNAVAILABLE``
    when the target cannot be reached or a tool it needs is missing,
    ``E_TIMEOUT`` when it did not answer in time, ``E_BAD_ARGS`` when the
    target's configuration is wrong. ``hint`` says what to do about it."""



@dataclass(frozen=True)
class PublishRequest:
    """What to publish: ``source_dir``, a folder holding exactly the files
    to publish (the host built it and removes it afterwards), ``target``,
    the person's configuration of the target (its table in
    ``publish.toml``, with ``name`` and ``kind`` always present), and the
    ``message`` to record with it (a commit message, a log line)."""

    source_dir: Path
    target: Mapping[str, Any]
    message: str


@dataclass(frozen=True)
class PublishResult:
    """What publishing did: a one-line ``summary`` ("published 12 files to
    gh-pages at 3f2a1c9"), the ``commit`` it made or found (git), the
    ``url`` where the result can be seen (the target's URL pattern filled
    in), and ``changed``: False when the target already held exactly these
    files and nothing was written."""

    summary: str
    commit: str | None = None
    url: str | None = None
    changed: bool = True
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Publisher:
    """One kind of target: ``name`` is what a target's ``kind`` says
    (``"git"``, ``"folder"``), ``label`` what the Export menu shows (a
    string or ``{"en": …, "zh-CN": …}``), ``publish(request) ->
    PublishResult`` does it (it may take a while: it is called in a worker
    thread)."""

    name: str
    label: str | Mapping[str, str]
    publish: Callable[[PublishRequest], PublishResult]


def all_publishers(pm: pluggy.PluginManager) -> dict[str, Publisher]:
    """Publisher name → publisher, from every plugin's ``register_publishers``.
    Two publishers of one name: the first registered wins (as with modes)."""
    found: dict[str, Publisher] = {}
    for impl in pm.hook.register_publishers.get_hookimpls():  # in registration order
        for publisher in impl.function() or []:
            found.setdefault(publisher.name, publisher)
    return found
