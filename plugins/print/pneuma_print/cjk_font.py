"""Chinese that prints on a machine without a CJK font: the shell's Noto
Sans SC slices (``pneuma.api.cjk_font_dir()``, written by scripts/build-web),
of which a page embeds only those its text needs.

Each slice's ``unicode-range`` is clipped to CJK code points (from U+2E80:
radicals, punctuation, kana, ideographs, full-width forms), so the face
draws Chinese and never takes over the Latin text the document's own fonts
draw. That lets every ``font-family`` list of the document get the face
first (``Georgia, serif`` → ``"Pneuma Noto Sans SC", Georgia, serif``):
Latin falls through to the document's fonts, Chinese is drawn the same on
every machine. First, not last: Chromium 156 draws some Han runs as empty
boxes when the face comes after a font that has their punctuation (a line
starting with a digit or “ in DejaVu Sans, then Chinese; the seed's
blockquote), and not when it comes first.
"""

from __future__ import annotations

import base64
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from pneuma.api import CJK_FONT_FAMILY, cjk_font_dir

FAMILY = CJK_FONT_FAMILY
CJK_START = 0x2E80
_FACE = re.compile(r"@font-face\s*\{([^}]*)\}")
_SRC = re.compile(r"url\(\s*['\"]?([^'\")]+)['\"]?\s*\)")
_RANGE = re.compile(r"unicode-range\s*:\s*([^;}]*)")
_GENERIC = ("serif", "sans-serif", "monospace", "cursive", "fantasy", "system-ui", "ui-serif",
            "ui-sans-serif", "ui-monospace", "ui-rounded", "math", "emoji", "fangsong")
_FAMILY_DECL = re.compile(r"(?P<prop>(?<![-\w])font-family\s*:\s*)(?P<value>[^;}\"'<>]*(?:(?:\"[^\"]*\"|'[^']*')"
                          r"[^;}\"'<>]*)*)", re.IGNORECASE)
_FONT_DECL = re.compile(r"(?P<prop>(?<![-\w])font\s*:\s*)(?P<value>[^;}\"'<>]*(?:(?:\"[^\"]*\"|'[^']*')"
                        r"[^;}\"'<>]*)*)", re.IGNORECASE)
_IMPORTANT = re.compile(r"\s*!\s*important\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Slice:
    file: Path
    ranges: tuple[tuple[int, int], ...]  # clipped to CJK_START and up


def font_dir() -> Path:
    return Path(cjk_font_dir())


@functools.lru_cache(maxsize=2)
def slices(directory: Path | None = None) -> tuple[Slice, ...]:
    """The CJK slices of the shell's font, empty when it is not installed."""
    folder = directory or font_dir()
    css_file = folder / "noto-sans-sc.css"
    try:
        css = css_file.read_text(encoding="utf-8")
    except OSError:
        return ()
    found: list[Slice] = []
    for face in _FACE.finditer(css):
        src, ranges = _SRC.search(face.group(1)), _RANGE.search(face.group(1))
        if not src or not ranges:
            continue
        clipped = tuple(r for r in (_clip(part) for part in ranges.group(1).split(",")) if r)
        path = (folder / src.group(1)).resolve()
        if clipped and path.is_relative_to(folder.resolve()):
            found.append(Slice(path, clipped))
    return tuple(found)


def _clip(part: str) -> tuple[int, int] | None:
    text = part.strip().upper().removeprefix("U+")
    try:
        low, _, high = text.partition("-")
        start, end = int(low, 16), int(high or low, 16)
    except ValueError:
        return None
    start = max(start, CJK_START)
    return (start, end) if start <= end else None


def needs_font(text: str) -> bool:
    return any(ord(ch) >= CJK_START for ch in text)


def font_faces(text: str, directory: Path | None = None) -> str:
    """``@font-face`` rules, fonts as data: URLs, for the slices that hold a
    CJK character of ``text``; empty when there is none (or no font)."""
    wanted = {ord(ch) for ch in text if ord(ch) >= CJK_START}
    if not wanted:
        return ""
    rules = []
    for piece in slices(directory):
        if any(low <= point <= high for point in wanted for low, high in piece.ranges):
            rules.append(_face(piece))
    return "\n".join(rules)


@functools.lru_cache(maxsize=128)
def _face(piece: Slice) -> str:
    data = base64.b64encode(piece.file.read_bytes()).decode("ascii")
    ranges = ",".join(f"U+{low:X}-{high:X}" if high != low else f"U+{low:X}" for low, high in piece.ranges)
    return (f'@font-face{{font-family:"{FAMILY}";font-style:normal;font-weight:400;'
            f'src:url(data:font/woff2;base64,{data}) format("woff2");unicode-range:{ranges};}}')


def with_fallback(css: str) -> str:
    """``css`` (a stylesheet, a <style> block or a style attribute's value)
    with the CJK face first in every font-family list."""
    css = _FAMILY_DECL.sub(lambda m: m.group("prop") + _add_family(m.group("value")), css)
    return _FONT_DECL.sub(lambda m: m.group("prop") + _add_to_shorthand(m.group("value")), css)


def _add_family(value: str) -> str:
    important = _IMPORTANT.search(value)
    body = value[:important.start()] if important else value.rstrip()
    tail = value[len(body):]
    names = [name.strip() for name in body.split(",")]
    if not body.strip() or FAMILY in body or names[0].lower() in ("inherit", "initial", "unset", "revert"):
        return value
    return ", ".join([f'"{FAMILY}"', *names]) + tail


def _add_to_shorthand(value: str) -> str:
    # ``font: 11pt/1.5 Georgia, serif``: the family list follows the size
    # (and its line height), the last space-separated word before the first
    # comma; a system font keyword (``font: caption``) has no list to extend.
    if FAMILY in value:
        return value
    size = re.search(r"\d[\d.]*(?:[a-z%]+)?(?:\s*/\s*[\d.]+(?:[a-z%]+)?)?\s+", value, re.IGNORECASE)
    if not size:
        return value
    return value[:size.end()] + _add_family(value[size.end():])
