#!/usr/bin/env python3
"""Check .excalidraw files for the mistakes that make Excalidraw misbehave.

Usage: python3 check_drawing.py FILE.excalidraw [MORE.excalidraw ...]

Errors (exit status 1): invalid JSON, wrong top level, duplicate or missing
ids, references to elements that do not exist, one-sided links (a text whose
container does not list it, an arrow bound to a shape that does not list the
arrow, and the other way round), arrows with fewer than two points.

Warnings (exit status 0): arrow ends far from the shape they are bound to,
bound text wider than its container, `index` keys out of order, links to
deleted elements, images whose file is missing.

Only the Python standard library is used.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SHAPES = {"rectangle", "ellipse", "diamond", "image", "frame", "magicframe", "embeddable", "iframe"}
LINEAR = {"arrow", "line"}
KNOWN_TYPES = SHAPES | LINEAR | {"text", "freedraw", "selection"}
NUMERIC = ("x", "y", "width", "height")
BOUND_TEXT_PADDING = 5


def _max_text_width(container: dict) -> float:
    width = float(container.get("width", 0))
    kind = container.get("type")
    if kind == "ellipse":
        return round(width / 2 * 2**0.5) - BOUND_TEXT_PADDING * 2
    if kind == "diamond":
        return round(width / 2) - BOUND_TEXT_PADDING * 2
    return width - BOUND_TEXT_PADDING * 2


def _listed(owner: dict, item_id: str, kind: str) -> bool:
    for entry in owner.get("boundElements") or []:
        if isinstance(entry, dict) and entry.get("id") == item_id and entry.get("type") == kind:
            return True
    return False


def _endpoint_near(point: tuple[float, float], shape: dict, gap: float) -> bool:
    """Whether an arrow end lies on, or within gap + tolerance of, the
    shape's bounding box (and not deep inside it)."""
    px, py = point
    x, y = float(shape["x"]), float(shape["y"])
    w, h = float(shape["width"]), float(shape["height"])
    left, right = min(x, x + w), max(x, x + w)
    top, bottom = min(y, y + h), max(y, y + h)
    slack = max(gap, 0) + 6
    if not (left - slack <= px <= right + slack and top - slack <= py <= bottom + slack):
        return False
    # Inside the box: the end must still be close to some edge (an ellipse or
    # diamond outline lies inside its box, so allow a quarter of the size).
    inside = left < px < right and top < py < bottom
    if inside:
        depth = min(px - left, right - px, py - top, bottom - py)
        return depth <= max(w, h) / 4 + slack
    return True


def check_data(data: object) -> tuple[list[str], list[str]]:
    """Return (errors, warnings) for parsed .excalidraw data."""
    errors: list[str] = []
    warnings: list[str] = []
    if not isinstance(data, dict):
        return ["the top level must be a JSON object"], warnings
    if data.get("type") != "excalidraw":
        errors.append('top level: "type" must be "excalidraw"')
    if not isinstance(data.get("version"), int):
        errors.append('top level: "version" must be an integer (2)')
    elements = data.get("elements")
    if not isinstance(elements, list):
        errors.append('top level: "elements" must be an array')
        return errors, warnings
    if "appState" in data and not isinstance(data["appState"], dict):
        errors.append('top level: "appState" must be an object')
    files = data.get("files", {})
    if not isinstance(files, dict):
        errors.append('top level: "files" must be an object')
        files = {}

    by_id: dict[str, dict] = {}
    for position, element in enumerate(elements):
        where = f"elements[{position}]"
        if not isinstance(element, dict):
            errors.append(f"{where}: not an object")
            continue
        element_id = element.get("id")
        if not isinstance(element_id, str) or not element_id:
            errors.append(f"{where}: missing string id")
            continue
        if element_id in by_id:
            errors.append(f"{where}: duplicate id '{element_id}'")
            continue
        by_id[element_id] = element
        kind = element.get("type")
        if kind not in KNOWN_TYPES:
            errors.append(f"'{element_id}': unknown type {kind!r}")
        for key in NUMERIC:
            value = element.get(key)
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                errors.append(f"'{element_id}': '{key}' must be a number")
        for key in ("version", "versionNonce", "seed"):
            if key in element and not isinstance(element[key], int):
                errors.append(f"'{element_id}': '{key}' must be an integer")
        if not isinstance(element.get("groupIds", []), list):
            errors.append(f"'{element_id}': 'groupIds' must be an array")
        bound = element.get("boundElements")
        if bound is not None and not isinstance(bound, list):
            errors.append(f"'{element_id}': 'boundElements' must be an array or null")

    def alive(element_id: str, referrer: str, field: str) -> dict | None:
        target = by_id.get(element_id)
        if target is None:
            errors.append(f"'{referrer}': {field} '{element_id}' does not exist")
            return None
        if target.get("isDeleted"):
            warnings.append(f"'{referrer}': {field} '{element_id}' is deleted")
        return target

    for element_id, element in by_id.items():
        kind = element.get("type")
        deleted = bool(element.get("isDeleted"))

        frame_id = element.get("frameId")
        if frame_id is not None:
            frame = alive(frame_id, element_id, "frameId")
            if frame is not None and frame.get("type") not in {"frame", "magicframe"}:
                errors.append(f"'{element_id}': frameId '{frame_id}' is not a frame")

        # Text inside a container: both sides must name each other.
        if kind == "text":
            for key in ("text", "originalText"):
                if key in element and not isinstance(element[key], str):
                    errors.append(f"'{element_id}': '{key}' must be a string")
            container_id = element.get("containerId")
            if container_id is not None:
                container = alive(container_id, element_id, "containerId")
                if container is not None:
                    if not _listed(container, element_id, "text"):
                        errors.append(
                            f"'{element_id}': container '{container_id}' does not list it in "
                            'boundElements ({"type": "text", "id": ...})'
                        )
                    if container.get("type") not in SHAPES | {"arrow"}:
                        errors.append(
                            f"'{element_id}': a {container.get('type')} cannot contain text"
                        )
                    elif container.get("type") != "arrow" and not deleted:
                        limit = _max_text_width(container)
                        if float(element.get("width", 0)) > limit + 1:
                            warnings.append(
                                f"'{element_id}': text is {element.get('width')} wide but "
                                f"'{container_id}' fits about {limit:.0f}; break the line or "
                                "widen the container"
                            )

        # Linear elements: points and bindings.
        if kind in LINEAR or kind == "freedraw":
            points = element.get("points")
            if not isinstance(points, list) or len(points) < 2:
                errors.append(f"'{element_id}': a {kind} needs at least two points")
                points = []
            elif any(
                not isinstance(p, list) or len(p) != 2
                or not all(isinstance(c, (int, float)) for c in p)
                for p in points
            ):
                errors.append(f"'{element_id}': every point must be [x, y] numbers")
                points = []
            for end, point_index in (("startBinding", 0), ("endBinding", -1)):
                binding = element.get(end)
                if binding is None:
                    continue
                if kind != "arrow":
                    errors.append(f"'{element_id}': only arrows can have {end}")
                    continue
                if not isinstance(binding, dict) or not isinstance(binding.get("elementId"), str):
                    errors.append(f"'{element_id}': {end} must be {{elementId, focus, gap}}")
                    continue
                target_id = binding["elementId"]
                target = alive(target_id, element_id, f"{end}.elementId")
                if target is None:
                    continue
                if not _listed(target, element_id, "arrow"):
                    errors.append(
                        f"'{element_id}': bound to '{target_id}' but '{target_id}' does not list "
                        'it in boundElements ({"type": "arrow", "id": ...})'
                    )
                if points and not deleted and all(k in target for k in NUMERIC):
                    px = float(element["x"]) + float(points[point_index][0])
                    py = float(element["y"]) + float(points[point_index][1])
                    gap = binding.get("gap", 0)
                    gap = float(gap) if isinstance(gap, (int, float)) else 0.0
                    if not _endpoint_near((px, py), target, gap):
                        warnings.append(
                            f"'{element_id}': its {'start' if point_index == 0 else 'end'} "
                            f"({px:.0f}, {py:.0f}) is far from '{target_id}'"
                        )

        # The other side: everything a shape lists must exist and point back.
        for entry in element.get("boundElements") or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
                errors.append(f"'{element_id}': boundElements entries must be {{id, type}}")
                continue
            other_id, other_kind = entry["id"], entry.get("type")
            other = alive(other_id, element_id, "boundElements entry")
            if other is None:
                continue
            if other_kind == "text":
                if other.get("type") != "text" or other.get("containerId") != element_id:
                    errors.append(
                        f"'{element_id}': lists text '{other_id}' whose containerId is not "
                        f"'{element_id}'"
                    )
            elif other_kind == "arrow":
                ends = [
                    (other.get(key) or {}).get("elementId")
                    for key in ("startBinding", "endBinding")
                    if isinstance(other.get(key), dict)
                ]
                if other.get("type") != "arrow" or element_id not in ends:
                    errors.append(
                        f"'{element_id}': lists arrow '{other_id}' that is not bound to it"
                    )
            else:
                errors.append(
                    f"'{element_id}': boundElements entry '{other_id}' has type {other_kind!r} "
                    '(must be "text" or "arrow")'
                )
        texts = [e for e in element.get("boundElements") or [] if isinstance(e, dict) and e.get("type") == "text"]
        if len(texts) > 1:
            errors.append(f"'{element_id}': a container holds at most one text")

        if kind == "image":
            file_id = element.get("fileId")
            if file_id is not None and file_id not in files:
                warnings.append(f"'{element_id}': image file '{file_id}' is not in \"files\"")

    indices = [e.get("index") for e in elements if isinstance(e, dict)]
    present = [i for i in indices if isinstance(i, str)]
    if present and present != sorted(present):
        warnings.append("'index' keys are not increasing in array order; Excalidraw will renumber them")
    if len(set(present)) != len(present):
        warnings.append("some 'index' keys repeat; Excalidraw will renumber them")
    return errors, warnings


def check_file(path: Path) -> tuple[list[str], list[str]]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [f"{path}: no such file"], []
    except json.JSONDecodeError as exc:
        return [f"not valid JSON: line {exc.lineno} column {exc.colno}: {exc.msg}"], []
    return check_data(data)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    status = 0
    for name in argv:
        errors, warnings = check_file(Path(name))
        for message in errors:
            print(f"{name}: error: {message}")
        for message in warnings:
            print(f"{name}: warning: {message}")
        if errors:
            status = 1
        else:
            print(f"{name}: ok ({len(warnings)} warning{'s' if len(warnings) != 1 else ''})")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
