"""The host's generic file tools (docs/design/tool-contract.md), for any mode to
offer as ``pneuma:<tool>`` (docs/tools.md): list_files, read_file,
write_to_file, replace_in_file, search_files, list_snapshots,
restore_snapshot.

Paths are relative to the workspace and go through ``ctx.sandbox``. A real
write keeps a snapshot of the file as it was just before (empty, with
``existed: false``, for a new file), so ``restore_snapshot(snapshotId)``
followed by ``write_to_file`` undoes it.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

from wcmatch import glob as wcglob

from pneuma.core.errors import ToolError
from pneuma.core.files import (
    atomic_write_text,
    check_text,
    content_hash,
    current_hash,
    max_read_bytes,
    not_found,
    read_text,
)
from pneuma.tools import confirm
from pneuma.tools.context import ToolContext
from pneuma.tools.diff import changed_lines, line_diff

GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.DOTGLOB
SEARCH_GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.MATCHBASE
PREVIEW_CHARS = 300


# --- list_files ---


def list_files(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """Entries under ``path``, relative to it; directories end with '/'.
    Without ``globs`` only the directory's own children; with them, every
    file (or, with ``dirsOnly``, directory) below it that matches one."""
    canonical, base = _directory(ctx, args["path"])
    globs = args.get("globs")
    dirs_only = bool(args.get("dirsOnly", False))
    limit = int(ctx.policies.get("maxListEntries") or 5000)
    entries: list[str] = []
    try:
        if not globs:
            with os.scandir(base) as listing:
                children = sorted(listing, key=lambda e: e.name)
            for entry in children:
                rel = _join(canonical, entry.name)
                if not ctx.sandbox.is_allowed(rel):
                    continue
                is_dir = entry.is_dir()
                if dirs_only and not is_dir:
                    continue
                entries.append(entry.name + "/" if is_dir else entry.name)
                _check_limit(entries, limit, canonical)
        else:
            for sub, is_dir in _walk(ctx, canonical, base, include_dirs=True):
                if is_dir != dirs_only:
                    continue
                if wcglob.globmatch(sub, globs, flags=GLOB_FLAGS):
                    entries.append(sub + "/" if is_dir else sub)
                    _check_limit(entries, limit, canonical)
    except OSError as exc:
        raise ToolError("E_IO", f"Cannot list {canonical or '.'}: {exc.strerror or type(exc).__name__}",
                        details={"path": canonical or "."}) from None
    finally:
        os.close(base)
    return {"entries": entries}


def _check_limit(entries: list[str], limit: int, canonical: str) -> None:
    if len(entries) > limit:
        raise ToolError("E_TOO_LARGE", f"more than {limit} entries under {canonical or '.'}",
                        details={"path": canonical or ".", "limit": limit},
                        hint="List a narrower directory or pass globs.")


def _directory(ctx: ToolContext, rel: str) -> tuple[str, int]:
    """The canonical path and an fd on the directory (the caller closes it),
    opened by fd from the root so a symlink swapped meanwhile cannot list
    a directory outside (Sandbox.open_dir)."""
    canonical = ctx.sandbox.normalize(rel, allow_root=True)
    ctx.sandbox.resolve(rel, allow_root=True)  # the sandbox's refusals first
    try:
        return canonical, ctx.sandbox.open_dir(rel)
    except FileNotFoundError:
        raise ToolError("E_NOT_FOUND", f"Directory not found: {canonical or '.'}",
                        details={"path": canonical or "."},
                        hint="Run list_files on its parent directory.") from None
    except NotADirectoryError:
        raise ToolError("E_NOT_FOUND", f"{canonical} is a file, not a directory",
                        details={"path": canonical, "isFile": True},
                        hint="Use read_file for a file.") from None


def _join(canonical: str, name: str) -> str:
    return f"{canonical}/{name}" if canonical else name


def _walk(ctx: ToolContext, canonical: str, base: int, *, include_dirs: bool):
    """(path relative to the directory fd ``base``, is_dir) for everything
    allowed below it, sorted, without following directory symlinks (fwalk
    opens each directory by fd and checks it is the one it listed)."""
    for root, dirs, files, _ in os.fwalk(".", dir_fd=base, follow_symlinks=False):
        rel_root = os.path.normpath(root)
        rel_root = "" if rel_root == "." else rel_root
        kept = []
        for name in sorted(dirs):
            sub = f"{rel_root}/{name}" if rel_root else name
            if ctx.sandbox.is_allowed(_join(canonical, sub)):
                kept.append(name)
                if include_dirs:
                    yield sub, True
        dirs[:] = kept
        for name in sorted(files):
            sub = f"{rel_root}/{name}" if rel_root else name
            if ctx.sandbox.is_allowed(_join(canonical, sub)):
                yield sub, False


# --- read_file ---


def read_file(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    canonical = ctx.sandbox.normalize(args["path"])
    text, _ = read_text(ctx, canonical, args.get("maxBytes"))
    return {"path": canonical, "content": text, "encoding": "utf-8",
            "bytes": len(text.encode("utf-8"))}


# --- write_to_file ---


def _read_or_absent(ctx: ToolContext, canonical: str) -> tuple[str | None, str | None]:
    try:
        return read_text(ctx, canonical)
    except ToolError as exc:
        if exc.code == "E_NOT_FOUND" and not exc.details.get("isDirectory"):
            return None, None
        raise


def _check_batch(ctx: ToolContext, canonical: str, diff: dict[str, Any]) -> None:
    limit = int(ctx.policies.get("batchMaxLines") or 0)
    changed = changed_lines(diff)
    if limit and changed > limit:
        raise ToolError("E_TOO_LARGE", f"this write changes {changed} lines of {canonical}; "
                        f"the limit is {limit} (batchMaxLines)",
                        details={"path": canonical, "lines": changed, "limit": limit},
                        hint="Write the file in smaller steps, e.g. one scene at a time.")


def _conflict(canonical: str, expected: str | None, actual: str | None, why: str) -> ToolError:
    return ToolError("E_CONFLICT", f"{canonical} {why}",
                     details={"path": canonical, "expectedHash": expected,
                              "actualHash": actual},
                     hint="Read the file again, then dry-run the write again.")


def write_to_file(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    canonical = ctx.sandbox.normalize(args["path"])
    ctx.sandbox.resolve_writable(canonical)  # refused before any dry run is shown
    content: str = args["content"]
    mode = args.get("mode", "overwrite")
    dry_run = args["dryRun"]
    key = args.get("idempotencyKey")
    request_hash = content_hash(f"{mode}\0{content}")
    if dry_run:
        with ctx.state.lock():
            old, base_hash = _read_or_absent(ctx, canonical)
            new = content if mode == "overwrite" else (old or "") + content
            check_text(ctx, canonical, new)
            new_hash = content_hash(new)
            diff = line_diff(old or "", new)
            _check_batch(ctx, canonical, diff)
            ctx.state.record_dry_run(canonical, new_hash, base_hash,
                                     requestHash=request_hash, mode=mode)
        # Shown to the person with Apply/Reject when a Pneuma page is
        # connected (outside the lock: it may take an HTTP round trip).
        response: dict[str, Any] = {"applied": False, "diff": diff}
        confirmation_id = confirm.offer_write(ctx, canonical, diff, new_hash)
        if confirmation_id:
            ctx.state.annotate_dry_run(canonical, new_hash, confirmationId=confirmation_id)
            response["confirmationId"] = confirmation_id
        return response

    # The person's decision on the dry run, if it was shown (outside the
    # lock: it may take minutes).
    pending = ctx.state.dry_run_for(canonical, None, requestHash=request_hash)
    if pending is None and mode == "overwrite":
        pending = ctx.state.dry_run_for(canonical, content_hash(content))
    if pending is not None and not (key is not None and _replayable(ctx, key)):
        confirm.check_write(ctx, canonical, pending)

    with ctx.state.lock():
        old, base_hash = _read_or_absent(ctx, canonical)
        new = content if mode == "overwrite" else (old or "") + content
        data = check_text(ctx, canonical, new)
        new_hash = content_hash(new)

        if key is not None:
            replay = ctx.state.idempotency_get(key)
            if replay is not None:
                if replay.get("path") != canonical or replay.get("requestHash") != request_hash:
                    raise ToolError(
                        "E_CONFLICT", f"idempotencyKey {key!r} was already used for a "
                        "different write", details={"idempotencyKey": key,
                                                    "path": replay.get("path")},
                        hint="Use a fresh idempotencyKey for a different write.")
                if replay.get("done", True) or base_hash == replay.get("newHash"):
                    if not replay.get("done", True):
                        replay["done"] = True
                        ctx.state.idempotency_put(key, path=canonical, request_hash=request_hash,
                                                  response=replay["response"])
                    return replay["response"]
                # The earlier attempt died before its write landed: do it now.

        record = ctx.state.dry_run_for(canonical, new_hash)
        if record is None:
            record = ctx.state.dry_run_for(canonical, None, requestHash=request_hash)
        if record is not None and record.get("baseHash") != base_hash:
            raise _conflict(canonical, record.get("baseHash"), base_hash,
                            "changed since the dry run showed its diff")
        if record is None and ctx.policies.get("writeRequiresDiff", True):
            raise ToolError(
                "E_POLICY_VIOLATION",
                f"writing {canonical} needs a dry run first (writeRequiresDiff): call "
                "write_to_file with the same path, content and mode and dryRun: true, "
                "show the diff, then write",
                details={"path": canonical, "policy": "writeRequiresDiff"},
                hint="Call write_to_file with dryRun: true first.")
        if record is None:
            _check_batch(ctx, canonical, line_diff(old or "", new))

        snapshot_id = ctx.snapshots.create(canonical, old or "", "write_to_file",
                                           idempotency_key=key, existed=old is not None)
        response = {"applied": True, "snapshotId": snapshot_id, "bytesWritten": len(data)}
        if key is not None:
            ctx.state.idempotency_put(key, path=canonical, request_hash=request_hash,
                                      response=response)
            _mark(ctx, key, done=False, new_hash=new_hash)
        # Someone outside these tools (an editor) may have written meanwhile.
        now_hash = current_hash(ctx, canonical)
        if now_hash != base_hash:
            raise _conflict(canonical, base_hash, now_hash, "changed while it was being written")
        atomic_write_text(ctx, canonical, new)
        if record is not None:
            ctx.state.consume_dry_run(canonical, record["newHash"])
        if key is not None:
            _mark(ctx, key, done=True, new_hash=new_hash)
        return response


def _replayable(ctx: ToolContext, key: str) -> bool:
    """An idempotency key whose write already landed answers without a new decision."""
    replay = ctx.state.idempotency_get(key)
    return bool(replay and replay.get("done", True))


def _mark(ctx: ToolContext, key: str, *, done: bool, new_hash: str) -> None:
    records = ctx.state.load("idempotency", {})
    if isinstance(records, dict) and isinstance(records.get(key), dict):
        records[key]["done"] = done
        records[key]["newHash"] = new_hash
        ctx.state.save("idempotency", records)


# --- replace_in_file ---

_JS_LITERAL = re.compile(r"^/(?P<body>.+)/(?P<flags>[a-z]*)$", re.S)
_FLAG_BITS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "g": 0, "u": 0}


def _compile(pattern: str, flags: str | None, field: str) -> tuple[re.Pattern[str], int]:
    """A Python regex from a JS-style one, and how many matches to replace
    (0: all; 1 when flags are given without 'g', as in JavaScript)."""
    literal = _JS_LITERAL.match(pattern)
    if literal and flags is None:
        pattern, flags = literal.group("body"), literal.group("flags")
    bits = 0
    for flag in flags or "":
        if flag not in _FLAG_BITS:
            raise ToolError("E_BAD_ARGS", f"unsupported regex flag {flag!r} (use g, i, m, s, u)",
                            details={"field": "flags"})
        bits |= _FLAG_BITS[flag]
    # JavaScript's named groups and back references, in Python's spelling.
    source = re.sub(r"\(\?<(?![=!])", "(?P<", pattern)
    source = re.sub(r"\\k<([A-Za-z_]\w*)>", r"(?P=\1)", source)
    try:
        compiled = re.compile(source, bits)
    except re.error as exc:
        raise ToolError("E_BAD_ARGS", f"invalid regular expression in '{field}': {exc}",
                        details={"field": field, "pattern": pattern}) from None
    count = 1 if flags is not None and "g" not in flags else 0
    return compiled, count


def _is_regex(find: str, flags: str | None) -> bool:
    return flags is not None or find.startswith("(?") or bool(_JS_LITERAL.match(find))


def _js_replacement(template: str):
    """A re.sub callback expanding $$, $&, $`, $', $1…$99 and $<name>."""

    def expand(match: re.Match[str]) -> str:
        out: list[str] = []
        i, n = 0, len(template)
        groups = match.re.groups
        while i < n:
            char = template[i]
            if char != "$" or i + 1 >= n:
                out.append(char)
                i += 1
                continue
            nxt = template[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
            elif nxt == "&":
                out.append(match.group(0))
                i += 2
            elif nxt == "`":
                out.append(match.string[: match.start()])
                i += 2
            elif nxt == "'":
                out.append(match.string[match.end():])
                i += 2
            elif nxt.isdigit():
                two = template[i + 1:i + 3]
                if len(two) == 2 and two.isdigit() and 0 < int(two) <= groups:
                    out.append(match.group(int(two)) or "")
                    i += 3
                elif 0 < int(nxt) <= groups:
                    out.append(match.group(int(nxt)) or "")
                    i += 2
                else:
                    out.append("$")
                    i += 1
            elif nxt == "<" and ">" in template[i + 2:]:
                end = template.index(">", i + 2)
                name = template[i + 2:end]
                if name in match.re.groupindex:
                    out.append(match.group(name) or "")
                    i = end + 1
                else:
                    out.append("$")
                    i += 1
            else:
                out.append("$")
                i += 1
        return "".join(out)

    return expand


def replace_in_file(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """Replace text in one file. ``find`` is a plain string unless it is a
    regex: ``flags`` given, a ``/pattern/flags`` literal, or an inline-flag
    start such as ``(?m)``. Plain strings and regexes without flags replace
    every match; JavaScript rules apply to flags (no 'g': the first only) and
    to ``$1``/``$&``/``$<name>`` in ``replace`` (literal for plain strings)."""
    canonical = ctx.sandbox.normalize(args["path"])
    ctx.sandbox.resolve_writable(canonical)
    find: str = args["find"]
    replace: str = args["replace"]
    flags = args.get("flags")
    if find == "":
        raise ToolError("E_BAD_ARGS", "'find' must not be empty", details={"field": "find"})
    regex = _compile(find, flags, "find") if _is_regex(find, flags) else None
    with ctx.state.lock():
        old, base_hash = read_text(ctx, canonical)
        if regex is None:
            count = old.count(find)
            new = old.replace(find, replace)
        else:
            pattern, limit = regex
            new, count = pattern.subn(_js_replacement(replace), old, count=limit)
        if count == 0 or new == old:
            return {"count": count}
        check_text(ctx, canonical, new)
        _check_batch(ctx, canonical, line_diff(old, new))
        ctx.snapshots.create(canonical, old, "replace_in_file")
        now_hash = current_hash(ctx, canonical)
        if now_hash != base_hash:
            raise _conflict(canonical, base_hash, now_hash, "changed while it was being edited")
        atomic_write_text(ctx, canonical, new)
    return {"count": count}


# --- search_files ---


def search_files(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """Lines matching ``regex`` in the files under ``path`` (or in that file),
    with paths relative to the workspace so they can be read directly."""
    canonical = ctx.sandbox.normalize(args["path"], allow_root=True)
    ctx.sandbox.resolve(args["path"], allow_root=True)  # the sandbox's refusals first
    pattern, _ = _compile(args["regex"], None, "regex")
    file_pattern = args.get("filePattern")
    max_matches = int(args.get("maxMatches", 2000))
    limit = max_read_bytes(ctx)
    try:
        base = ctx.sandbox.open_dir(args["path"])
    except NotADirectoryError:
        candidates = [("", canonical)]
    except FileNotFoundError:
        raise not_found(canonical or ".") from None
    else:
        try:
            candidates = [(sub, _join(canonical, sub))
                          for sub, _ in _walk(ctx, canonical, base, include_dirs=False)]
        finally:
            os.close(base)
    matches: list[dict[str, Any]] = []
    for sub, rel in candidates:
        if file_pattern and not wcglob.globmatch(sub or rel.rsplit("/", 1)[-1], file_pattern,
                                                 flags=SEARCH_GLOB_FLAGS):
            continue
        try:
            # By fd from the root (Sandbox.open_file): refuses hard links
            # on the fd, and no symlink swapped meanwhile leads out.
            data, info = ctx.sandbox.read_bytes(rel, limit)
            if info.st_size > limit or len(data) > limit:
                continue  # too large
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError, ToolError):
            continue  # binary, unreadable, refused or vanished: not searchable text
        for number, line in enumerate(text.split("\n"), start=1):
            if pattern.search(line):
                matches.append({"path": rel, "line": number,
                                "preview": line.rstrip("\r")[:PREVIEW_CHARS]})
                if len(matches) >= max_matches:
                    return {"matches": matches}
    return {"matches": matches}


# --- snapshots ---


def list_snapshots(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    limit = args.get("limit", 50)
    if not isinstance(limit, (int, float)) or isinstance(limit, bool) or \
            math.isnan(limit) or limit < 0:
        limit = 50
    limit = min(int(limit), 1000)
    out = []
    for meta in ctx.snapshots.list(args.get("path"), limit):
        item = {"id": meta["id"], "path": meta["path"], "timestamp": meta["timestamp"],
                "contentHash": meta["contentHash"]}
        if isinstance(meta.get("idempotencyKey"), str):
            item["idempotencyKey"] = meta["idempotencyKey"]
        out.append(item)
    return {"snapshots": out}


def restore_snapshot(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    """The snapshot's path and content; nothing is written (dry-run and
    write it with write_to_file to restore the file)."""
    meta, text = ctx.snapshots.get(args["snapshotId"])
    return {"path": meta["path"], "content": text}


__all__ = ["list_files", "read_file", "write_to_file", "replace_in_file", "search_files",
           "list_snapshots", "restore_snapshot"]
