"""How the {{ cookiecutter.name }} mode describes a turn (the ``register_change_describers``
hook in ``__init__.py`` hands Pneuma ``DESCRIBER``; see Pneuma's docs/hooks.md).

After each turn of the agent, Pneuma shows in the chat what the turn changed,
and ``pneuma checkpoints show`` prints it. Without a describer that is one
line per file; with this one it is one line per page, named by its title,
saying which of its sections changed:

    Welcome to Notes: sections changed: How to steer · What the pages can hold

``describe`` reads the two states of the turn from ``files`` (the checkpoint
store, never the live workspace) and returns ``Change`` items in reading
order. ``locate`` is what the viewer's ``show-file`` action takes, so a
click on the line opens the page at the first changed section. Reverting
one of these changes puts the page back as it was before the turn (the
default without a ``revert``); give ``ChangeDescriber`` a ``revert`` when
one file holds several changes that a person may want to undo one by one.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from pneuma.api import Change, ChangeDescriber, TurnFiles, text_of

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9:._/@#=+-]{0,199}$")
_KIND = {"added": "added", "deleted": "removed", "modified": "changed"}


def sections(text: str) -> dict[str, str]:
    """Each heading's text with the lines under it (up to the next heading),
    in order; headings inside fenced code do not count. The text before the
    first heading is under ``""``."""
    found: dict[str, str] = {}
    current, fence = "", ""
    for line in text.splitlines(keepends=True):
        opened = _FENCE.match(line)
        if fence and opened and opened.group(1)[0] == fence[0]:
            fence = ""
        elif not fence and opened:
            fence = opened.group(1)
        heading = None if fence or opened else _HEADING.match(line.rstrip("\r\n"))
        if heading:
            current = " ".join((heading.group(2) or "").split())
            while current in found:  # two headings with one text: keep both apart
                current += " "
        found[current] = found.get(current, "") + line
    return found


def _title(text: str | None, path: str) -> str:
    titled = [name for name in sections(text or "") if name.strip()]
    return titled[0].strip() if titled else path


def describe(files: TurnFiles) -> list[Change]:
    changes = []
    for item in files.changed:
        if not item.path.endswith(".md"):
            continue  # any other file: Pneuma adds one change per file
        old, new = text_of(files.before(item.path)), text_of(files.after(item.path))
        what = {"added": "page added", "deleted": "page removed"}.get(item.status, "changed")
        locate: dict[str, Any] | None = {"file": item.path} if new is not None else None
        if old is not None and new is not None:
            before, after = sections(old), sections(new)
            touched = [name for name in after if before.get(name) != after[name]]
            touched += [name for name in before if name not in after]
            named = [name.strip() for name in touched if name.strip()]
            if named:
                what = "sections changed: " + " · ".join(named)
                if named[0] in after and locate is not None:
                    locate["heading"] = named[0]
        change_id = f"page:{item.path}"
        if not _ID.match(change_id):  # a path the id grammar cannot carry: a stable digest
            change_id = "page:#" + hashlib.sha256(item.path.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        changes.append(Change(id=change_id, where=_title(new if new is not None else old, item.path),
                              what=what, kind=_KIND[item.status],  # type: ignore[arg-type]
                              files=(item.path,), locate=locate))
    return changes


DESCRIBER = ChangeDescriber(mode="{{ cookiecutter.name }}", describe=describe)
