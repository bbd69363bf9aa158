"""validate_script: what in a scene breaks, misbehaves or reads badly when played.

The checks follow the engine (see script.py): the parser never fails and turns
anything it does not understand into dialogue, so the validator reports

* ``syntax`` — a statement without its final ``;`` (tolerated by the engine:
  reported, ``valid`` stays true); a would-be command the engine will show as
  dialogue (keyword with wrong case, spaces or a full-width colon, a misspelt or
  removed keyword, ``end -next``); continuation lines the engine does not join;
  choose options without a target;
* ``resource`` — a file missing from its game/ folder (exact, case-sensitive
  names; near names in the hint), a missing scene, label or animation;
* ``style`` — things that play but probably not as meant (a ``" -"`` inside
  dialogue that cuts the text, duplicate labels).

Names with ``{var}`` are resolved at run time and not checked; ``none`` and
empty contents clear and are fine; http(s) URLs are used as they are.
``valid`` is false only for diagnostics that break or misbehave when played.
Line numbers are 1-based. Messages and hints are Chinese by default, English
with ``language="en"``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pneuma_webgal.resources import GameIndex
from pneuma_webgal.script import (
    COMMANDS,
    KEYWORDS,
    LEGACY_COMMANDS,
    Ref,
    Scene,
    Sentence,
    js_trim,
    parse_scene,
    references,
)

BUILTIN_COMPLEX_ANIMATIONS = ("universalSoftIn", "universalSoftOff", "testblur")
BUILTIN_PIXI_EFFECTS = ("rain", "snow", "heavySnow", "cherryBlossoms")

#: Arguments the engine reads on dialogue lines.
SAY_ARGS = frozenset(
    {
        "speaker", "notend", "concat", "clear", "fontSize", "left", "right", "center",
        "figureId", "volume", "vocal", "next", "when", "continue",
    }
)  # fmt: skip

# --- messages -------------------------------------------------------------------

# Every message and hint in Chinese and English, kept as data beside this
# module (messages.json, one entry a key) so that a translator edits one file.
_M: dict[str, tuple[str, str]] = {
    key: (texts["zh-CN"], texts["en"])
    for key, texts in json.loads(Path(__file__).with_name("messages.json").read_text(encoding="utf-8")).items()
}


def _lang(language: str | None) -> int:
    return 1 if language and language.lower().startswith("en") else 0


@dataclass
class Diagnostic:
    line: int
    kind: str
    message: str
    fix_hint: str | None = None
    breaks: bool = True  # misbehaves when played -> valid false

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"line": self.line, "kind": self.kind, "message": self.message}
        if self.fix_hint:
            d["fixHint"] = self.fix_hint
        return d


class _Reporter:
    def __init__(self, language: str | None):
        self.i = _lang(language)
        self.items: list[Diagnostic] = []

    def t(self, key: str, **kw: Any) -> str:
        return _M[key][self.i].format(**kw)

    def join(self, items: list[str], limit: int = 5) -> str:
        shown = [f"“{x}”" if self.i == 0 else f"'{x}'" for x in items[:limit]]
        more = "" if len(items) <= limit else ("…" if self.i == 0 else ", …")
        return self.t("sep").join(shown) + more

    def available(self, names: list[str]) -> str:
        """What exists, as the end of a hint (": 'a', 'b'"), or "" when nothing does."""
        return (("：" if self.i == 0 else ": ") + self.join(names)) if names else ""

    def add(self, line: int, kind: str, key: str, fix: str | None = None, *, breaks: bool = True, **kw: Any):
        self.items.append(Diagnostic(line, kind, self.t(key, **kw), fix, breaks))


# --- helpers --------------------------------------------------------------------


def _osa(a: str, b: str) -> int:
    """Optimal-string-alignment edit distance (adjacent swaps count once)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[len(b)]


_LOWER_KW = {k.lower(): k for k in COMMANDS}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[a-z_][a-z0-9_]*[A-Z][A-Za-z0-9_]*")


def nearest_command(word: str) -> tuple[str, int]:
    """The closest keyword and its (case-insensitive) edit distance."""
    low = word.lower()
    best = min(COMMANDS, key=lambda k: (_osa(low, k.lower()), abs(len(k) - len(word))))
    return best, _osa(low, best.lower())


@functools.lru_cache(maxsize=4096)
def would_be_command(head: str) -> tuple[str, str] | None:
    """If a dialogue line's speaker text is a mistyped command: (reason, keyword)."""
    word = js_trim(head)
    if word in KEYWORDS:
        return ("spaces", KEYWORDS[word] if KEYWORDS[word] != "comment" else word)
    if word in LEGACY_COMMANDS:
        return ("legacy", word)
    if word.lower() in _LOWER_KW:
        return ("case", _LOWER_KW[word.lower()])
    if not _IDENT.fullmatch(word) or len(word) < 3:
        return None
    kw, dist = nearest_command(word)
    allowed = 1 if len(kw) <= 5 else 2
    if word[0].islower() and dist <= allowed:
        return ("typo", kw)
    if _CAMEL.fullmatch(word):
        return ("typo", kw)
    return None


def _similar(name: str, names: Collection[str]) -> list[str]:
    """The names equal to ``name`` but for case, else up to three close ones."""
    import difflib

    return [n for n in names if n.lower() == name.lower()] or difflib.get_close_matches(name, names, n=3, cutoff=0.5)


def _has_var(name: str) -> bool:
    return re.search(r"(?<!\\)\{[^}]*\}", name) is not None


_COND_PREFIX = re.compile(r"^\s*(\([^)]*\))?\s*(\[[^\]]*\])?\s*->")


def choose_options(sentence: Sentence) -> list[tuple[str, str | None]]:
    """(text, target) of each option as the runtime reads them (trimmed, conditions dropped)."""
    result = []
    for option in re.split(r"(?<!\\)\|", sentence.raw_content):
        option = js_trim(option)
        if option == "":
            continue
        m = _COND_PREFIX.match(option)
        if m and (m.group(1) or m.group(2)):
            option = option[m.end() :]
        parts = re.split(r"(?<!\\):", option)
        text = js_trim(parts[0])
        target = js_trim(parts[1]) if len(parts) > 1 else None
        result.append((text, target))
    return result


# --- the checks -----------------------------------------------------------------


def _check_missing_file(rep: _Reporter, index: GameIndex, s: Sentence, ref: Ref) -> None:
    folder = ref.folder
    name = ref.name.split("?", 1)[0] if folder == "figure" else ref.name
    if ref.remote or _has_var(name) or name == "":
        return
    if index.has(folder, name):
        return
    what = rep.t(f"what_{folder}") if f"what_{folder}" in _M else folder
    if ref.role not in ("content", "vocal", "choose"):
        what = f"{what} (-{ref.role})"
    if not index.exists:
        rep.add(s.line, "resource", "missing_no_game", None, what=what, root=index.root.name + "/")
        return
    if name.strip() != name and index.has(folder, name.strip()):
        # Browsers drop leading/trailing spaces of a URL, so this loads; say it anyway.
        rep.add(s.line, "resource", "stray_spaces", rep.t("space_hint", cands=rep.join([name.strip()])), breaks=False, name=name)
        return
    hint: str | None
    cases = index.case_variants(folder, name)
    if cases:
        hint = rep.t("case_hint", cands=rep.join(cases))
    elif name.strip() != name and (index.has(folder, name.strip()) or index.case_variants(folder, name.strip())):
        hint = rep.t("space_hint", cands=rep.join([name.strip()] + index.case_variants(folder, name.strip())))
    else:
        near = index.near(folder, name)
        elsewhere = index.folders_holding(name, folder)
        if elsewhere:
            hint = rep.t("other_folder_hint", folders=rep.join([f"game/{f}/" for f in elsewhere]), what=what, folder=folder)
        elif near:
            hint = rep.t("near_hint", cands=rep.join(near))
        else:
            hint = rep.t("add_file_hint", folder=folder, avail=rep.available(index.names(folder)))
    rep.add(s.line, "resource", "missing_file", hint, what=what, folder=folder, name=name)


def _check_animation(rep: _Reporter, index: GameIndex, s: Sentence, name: str) -> None:
    if name in ("", "none") or _has_var(name):
        return
    table = index.animation_table
    if table is None:
        if index.animation_table_error:
            rep.add(s.line, "resource", "animation_bad_table", None, error=index.animation_table_error)
        else:
            rep.add(s.line, "resource", "animation_no_table", None, name=name)
        return
    if name not in table:
        cands = rep.join(_similar(name, table) or table, limit=8)
        rep.add(s.line, "resource", "missing_animation", rep.t("animation_hint", cands=cands), name=name)
    elif index.exists and not index.has("animation", f"{name}.json"):
        rep.add(s.line, "resource", "animation_no_file", None, name=name)


#: Commands whose content must name one of the engine's built-ins: (the names, message key).
_BUILTIN_ONLY: dict[str, tuple[tuple[str, ...], str]] = {
    "setComplexAnimation": (BUILTIN_COMPLEX_ANIMATIONS, "complex_animation"),
    "pixiPerform": (BUILTIN_PIXI_EFFECTS, "pixi_effect"),
}


def _check_builtin(rep: _Reporter, s: Sentence, builtins: tuple[str, ...], key: str) -> None:
    name = s.raw_content
    if name and not _has_var(name) and name not in builtins:
        rep.add(s.line, "syntax", key, rep.t("builtin_hint", cands=rep.join(list(builtins))), name=name)


def _check_line_syntax(rep: _Reporter, s: Sentence, prev: Sentence | None) -> bool:
    """Would-be commands and continuation lines. True when something was reported."""
    raw = s.raw
    stripped = js_trim(s.statement)
    if s.command == "comment":
        return False
    # Continuation lines (the Terre editor folds them; the engine does not).
    if raw[:1] in (" ", "\t") and stripped[:1] in ("-", "|") and "-concat" not in raw:
        shown = s.content or stripped
        rep.add(s.line, "syntax", "continuation", rep.t("continuation_fix"), first=stripped[0], text=shown)
        return True
    if s.command != "say":
        return False
    if s.has_colon and s.head != "say":
        found = would_be_command(s.head)
        if found:
            reason, kw = found
            head = js_trim(s.head)
            if reason == "spaces":
                rep.add(s.line, "syntax", "keyword_spaces", rep.t("keyword_fix", kw=kw), head=s.head, kw=kw)
            elif reason == "case":
                rep.add(s.line, "syntax", "keyword_case", rep.t("keyword_fix", kw=kw), head=head)
            elif reason == "legacy":
                target = LEGACY_COMMANDS[kw]
                rep.add(s.line, "syntax", "legacy", rep.t(f"legacy_fix_{target}"), head=head)
            else:
                rest = s.statement[s.statement.find(":") + 1 :].strip()
                rep.add(s.line, "syntax", "unknown_command", rep.t("unknown_fix", kw=kw, rest=rest[:40]), head=head)
            return True
        return False
    if not s.has_colon:
        # changeBg：x (full-width colon)
        m = re.match(r"\s*([A-Za-z_]+)\s*：", s.statement)
        if m and (m.group(1) in KEYWORDS or m.group(1).lower() in _LOWER_KW):
            kw = KEYWORDS.get(m.group(1)) or _LOWER_KW[m.group(1).lower()]
            rep.add(s.line, "syntax", "fullwidth_colon", rep.t("fullwidth_fix"), kw=kw)
            return True
        # `end -next`, `end `, ` pixiInit`: a bare keyword that is not exactly the statement
        word = s.raw_content
        if word in KEYWORDS:
            args = s.statement[s.statement.find(" -") :].strip() if " -" in s.statement else ""
            rest = f" {args}" if args else " -next"
            rep.add(s.line, "syntax", "bare_keyword", rep.t("bare_keyword_fix", kw=word, rest=rest), text=stripped, kw=word)
            return True
    return False


def validate_scene(scene: Scene, index: GameIndex, *, language: str | None = None) -> dict[str, Any]:
    """The validate_script response for a parsed scene."""
    diagnostics = diagnose_scene(scene, index, language=language)
    return {
        "valid": not any(d.breaks for d in diagnostics),
        "diagnostics": [d.to_dict() for d in diagnostics],
    }


def diagnose_scene(scene: Scene, index: GameIndex, *, language: str | None = None) -> list[Diagnostic]:
    """Every diagnostic of a scene, sorted by line."""
    rep = _Reporter(language)
    labels = scene.labels
    label_names = list(labels)
    prev: Sentence | None = None
    for s in scene.sentences:
        reported = _check_line_syntax(rep, s, prev)
        if s.command != "comment" and not s.terminated and js_trim(s.statement):
            rep.add(s.line, "syntax", "no_semicolon", rep.t("no_semicolon_fix"), breaks=False)
        if s.command != "comment" and s.raw.rstrip().endswith("\\") and not s.terminated:
            rep.add(s.line, "syntax", "backslash", rep.t("backslash_fix"))
        cmd = s.command
        for ref in references(s):
            _check_missing_file(rep, index, s, ref)
        if cmd == "choose":
            for text, target in choose_options(s):
                if target is None or target == "":
                    rep.add(s.line, "syntax", "choose_no_target", rep.t("choose_no_target_fix", text=text), breaks=False, text=text)
                elif "." in target:
                    _check_missing_file(rep, index, s, Ref("scene", target, "choose"))
                else:
                    _check_label(rep, s, target, labels, label_names)
        elif cmd == "jumpLabel":
            _check_label(rep, s, s.raw_content, labels, label_names)
        elif cmd == "setAnimation":
            _check_animation(rep, index, s, s.raw_content)
        elif cmd in _BUILTIN_ONLY:
            _check_builtin(rep, s, *_BUILTIN_ONLY[cmd])
        if cmd in ("changeFigure", "changeBg", "setTransition"):
            for key in ("enter", "exit"):
                value = s.arg(key)
                if isinstance(value, str):
                    _check_animation(rep, index, s, value)
        if cmd == "label" and s.content and labels.get(s.content) != s.line:
            rep.add(s.line, "style", "duplicate_label", rep.t("duplicate_label_fix"), breaks=False, label=s.content, first=labels[s.content])
        if cmd == "say" and not reported:
            for key, value in s.args:
                if key in SAY_ARGS or value is not True:
                    continue
                if re.search(r"\s", key) or not key.isascii():
                    rep.add(s.line, "style", "dash_in_text", rep.t("dash_fix"), breaks=False, arg=key, text=s.content)
                    break
        prev = s
    if all(s.command == "comment" for s in scene.sentences):
        rep.add(1, "style", "empty_scene", rep.t("empty_scene_fix"), breaks=False)
    return sorted(rep.items, key=lambda d: d.line)


def _check_label(rep: _Reporter, s: Sentence, label: str, labels: dict[str, int], names: list[str]) -> None:
    if label == "" or _has_var(label) or label in labels:
        return
    near = _similar(label, names)
    if near:
        hint = rep.t("label_hint_near", cands=rep.join(near))
    else:
        hint = rep.t("label_hint_add", label=label, avail=rep.available(names))
    rep.add(s.line, "resource", "missing_label", hint, label=label)


def validate_text(text: str, index: GameIndex, *, scene_name: str = "scene.txt", language: str | None = None) -> dict[str, Any]:
    """Parse and validate a scene's text against a game folder."""
    return validate_scene(parse_scene(text, scene_name), index, language=language)
