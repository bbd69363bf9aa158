"""Every built-in viewer (coauthor, doc, draw, slide, webgal) speaks the
shell's two languages, English and Simplified Chinese, from its own catalogue:
``static/i18n.js`` beside its ``viewer.js`` (docs/viewer-contract.md,
"Language").

A person whose page is in Chinese must not meet an English label because a
key was added to one locale and not the other, a raw key because the viewer
asks for a key no locale has, a stray ``{placeholder}``, or a label typed
into the viewer's code instead of its catalogue. These checks read the
JavaScript, as tests/test_i18n_catalogues.py does for the shell, with one
set of parsers for all five viewers, and check those parsers on samples of
every form the viewers use. What a viewer says to the agent (action results,
``<viewer-context>``) stays English and is not checked: it goes in
``message:`` and ``error:`` fields and context lines, never in labels.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pneuma.mode_check.locales import (
    CATALOGUE,
    CATALOGUE_FILE,
    PLACEHOLDER,
    QUOTED_KEY,
    key_prefixes,
    used_keys,
)

PLUGINS = Path(__file__).resolve().parent.parent / "plugins"
MODES = ("coauthor", "dashboard", "diagram", "doc", "draw", "illustrate", "mode-maker", "print", "slide", "video", "webcraft", "webgal")
# The code that may name a catalogue key: the viewer and the modules it is
# split into (every .js beside it but its catalogue), slide-doc.js included
# (its manifest errors carry an errorKey).
# The modules a viewer.js was split into (its methods and helpers by
# concern): held to the same English-literal check as viewer.js.
VIEWER_PARTS: dict[str, tuple[str, ...]] = {
    "slide": ("controls.js", "frames.js", "pointing.js", "deck-order.js", "agent-actions.js",
              "annotate.js", "inplace-edit.js", "follow.js"),
    "coauthor": ("panels.js", "text.js", "pins.js"),
    "doc": ("markdown.js", "context.js", "doc-edit.js", "doc-pins.js"),
    "draw": ("drawing.js", "library.js", "pins.js"),
    "diagram": ("pins.js", "label-edit.js"),
    "dashboard": ("actions.js", "board.js", "data.js", "grid-drag.js", "pins.js", "selection.js", "tiles.js"),
    "webgal": ("pins.js",),
    "webcraft": ("annotate.js", "edit-in-place.js"),
    "mode-maker": ("jobs.js", "package-info.js", "play-frame.js"),
    "illustrate": ("board.js", "choices.js", "pins.js", "report.js", "title-edit.js", "follow.js"),
    "print": ("sheet.js", "actions.js", "pins.js", "edit.js"),
    "video": ("controls.js", "actions.js", "pins.js", "scene-frame.js", "composition.js"),
}
LOCALES = ("en", "zh-CN")

CJK = re.compile(r"[\u3400-\u9fff]")


def static(mode: str) -> Path:
    return PLUGINS / mode / f"pneuma_{mode.replace('-', '_')}" / "static"


def catalogue(mode: str) -> dict[str, dict[str, str]]:
    match = CATALOGUE.search((static(mode) / "i18n.js").read_text(encoding="utf-8"))
    assert match, f"{mode}/static/i18n.js has no `export const MESSAGES = {{…}};` block"
    data: dict[str, dict[str, str]] = json.loads(match.group(1))
    return data


def own_modules(mode: str) -> list[Path]:
    return sorted(p for p in static(mode).glob("*.js") if p.name != CATALOGUE_FILE)


def viewer_js(mode: str) -> str:
    names = ("viewer.js", *VIEWER_PARTS.get(mode, ()))
    return "\n".join((static(mode) / name).read_text(encoding="utf-8") for name in names)


def sources(mode: str) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in own_modules(mode))


# --- English literals in the viewer's code ------------------------------------------------

# Names that are the same in every language: export formats, file names.
ALLOWED_LITERALS = {"PDF", "HTML", "config.txt"}
ENGLISH = re.compile(r"[A-Za-z]{3,}")
# ${…} in a template literal, with one level of braces (or a nested
# template's ${…}) inside; replaced by a neutral mark before matching.
INTERPOLATION = re.compile(r"\$\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")
QUOTED = r"""(["'`])(?P<text>(?:(?!\1)[^\\]|\\.)*)\1"""
# A quoted literal given as a label: an attribute in h(…) or an object, a
# label property or variable assigned, a label attribute set, a notice flashed.
LABEL_LITERALS = [
    re.compile(r"""(?:\b(?:title|text|placeholder|alt|label)|["']aria-label["'])\s*:\s*""" + QUOTED),
    re.compile(r"""(?:\.|\b(?:const|let|var)\s+|^[ \t]*)"""
               r"""(?:textContent|innerText|title|placeholder|alt|text|label)\s*=\s*""" + QUOTED, re.M),
    re.compile(r"""setAttribute\(\s*["'](?:title|aria-label|placeholder|alt)["']\s*,\s*""" + QUOTED),
    re.compile(r"""\bflash\(\s*""" + QUOTED),
]
# Markup in innerHTML strings: text between a tag (not <style> or <script>)
# and the next tag, and label attributes inside a tag.
MARKUP_TEXT = re.compile(r"""<(?!style\b|script\b)[a-z/][^<>]*>\s*([^<>"`\n]*?)\s*(?=<[a-z/])""")
MARKUP_LABEL = re.compile(r"""<[a-z][^<>]*?\b(?:title|aria-label|placeholder|alt)=\\?["']([^"'\\]*)\\?["']""")


def without_comments(js: str) -> str:
    js = re.sub(r"/\*.*?\*/", "", js, flags=re.S)
    return re.sub(r"(?m)^\s*//.*$", "", js)


def prose(value: str) -> bool:
    """Whether a literal reads as words for a person: interpolations, tags,
    escapes, entities and allowed names removed, some English word is left."""
    if value.strip() in ALLOWED_LITERALS:
        return False
    text = INTERPOLATION.sub(" ", value)
    text = re.sub(r"</?[a-z][^<>]*>", " ", text)  # its markup text is MARKUP_TEXT's
    text = re.sub(r"\\.", " ", text)
    text = re.sub(r"&\w+;", " ", text)
    return any(word not in ALLOWED_LITERALS for word in ENGLISH.findall(text))


def english_literals(js: str) -> list[str]:
    """The English labels written into `js`, as they read there, each
    interpolation shortened to ${…}."""
    js = INTERPOLATION.sub("${…}", without_comments(js))
    found = [m.group(0).strip() for pattern in LABEL_LITERALS for m in pattern.finditer(js) if prose(m.group("text"))]
    found += [m.group(1) for m in MARKUP_TEXT.finditer(js) if prose(m.group(1))]
    found += [m.group(0) for m in MARKUP_LABEL.finditer(js) if prose(m.group(1))]
    return found


# --- the parsers, on samples --------------------------------------------------------------


def test_the_catalogue_parser_reads_the_messages_block() -> None:
    sample = """const X = 1;
export const MESSAGES = {
  "en": {"a.b": "A"},
  "zh-CN": {"a.b": "甲"}
};
export function translator(getLocale) { return (key) => ({}[key]); }
"""
    match = CATALOGUE.search(sample)
    assert match and json.loads(match.group(1)) == {"en": {"a.b": "A"}, "zh-CN": {"a.b": "甲"}}


def test_the_key_parser_sees_the_calls_the_viewers_make() -> None:
    sample = """
      t("a.b") + this.t('c.d', {n: 1}) + tr("e.f") + this.viewer.t("g.h") + at("no") + format("no.2");
      this.t(`kind.${k}`, {}, k) + tr(`event.${e.type}`);
      return { error: "manifest.json is not JSON", errorKey: "manifest.invalidJson" };
    """
    assert used_keys(sample) == {"a.b", "c.d", "e.f", "g.h", "manifest.invalidJson"}
    assert key_prefixes(sample) == ("kind.", "event.")


def test_the_literal_checker_finds_english_labels() -> None:
    # The forms a label takes in these viewers: each is caught, and the
    # translated form of each is not.
    sample = """
      h("button", { title: "Show the outline", "aria-label": 'Next slide' });
      this.notice.textContent = `Exported ${name}.`;
      el.setAttribute("aria-label", "Table of contents");
      this.flash("Could not save");
      root.innerHTML = `<div><h2>No documents yet</h2><a title="Open it">#</a></div>`;
      const label = "Drag to reorder";
      label = "Untitled";
      items.push({ path: file, label: `${scene} · ${where}${snippet ? ` “${snippet}”` : ""}` });
      panel.innerHTML = `<p>
        Nothing here
      </p>`;
      h("strong", { text: "PDF" }), h("span", { label: "config.txt" });
      h("button", { title: this.t("toolbar.outline") });
      this.article.innerHTML = `<h2>${escapeHtml(this.t("empty.title"))}</h2>`;
      hit.text = `${before}<mark>${match}</mark>${after}`;
      frame.srcdoc = `<style>html,body{margin:0;overflow:hidden}</style>`;
      // title: "a comment is not a label"
      return { success: false, message: "The deck has no slides" };
    """
    assert english_literals(sample) == [
        'title: "Show the outline"', "\"aria-label\": 'Next slide'",
        ".textContent = `Exported ${…}.`", 'const label = "Drag to reorder"', 'label = "Untitled"',
        'setAttribute("aria-label", "Table of contents"', 'flash("Could not save"',
        "No documents yet", "Nothing here", '<a title="Open it"',
    ]


# --- the catalogues -----------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_both_locales_hold_the_same_keys_and_placeholders(mode: str) -> None:
    messages = catalogue(mode)
    assert sorted(messages) == sorted(LOCALES)
    en, zh = messages["en"], messages["zh-CN"]
    assert sorted(en.keys() - zh.keys()) == [], f"{mode}: in en only"
    assert sorted(zh.keys() - en.keys()) == [], f"{mode}: in zh-CN only"
    empty = [k for locale in LOCALES for k, v in messages[locale].items() if not (isinstance(v, str) and v.strip())]
    assert not empty, f"{mode}: empty or non-text messages: {empty}"
    differ = {k: (en[k], zh[k]) for k in en if set(PLACEHOLDER.findall(en[k])) != set(PLACEHOLDER.findall(zh[k]))}
    assert not differ, f"{mode}: placeholders differ: {differ}"


@pytest.mark.parametrize("mode", MODES)
def test_chinese_texts_are_translated(mode: str) -> None:
    untranslated = {k: v for k, v in catalogue(mode)["zh-CN"].items() if not CJK.search(v)}
    assert not untranslated, f"{mode}: zh-CN texts without Chinese: {untranslated}"


@pytest.mark.parametrize("mode", MODES)
def test_every_key_the_viewer_uses_is_in_the_catalogue(mode: str) -> None:
    used = used_keys(sources(mode))
    assert len(used) >= 10, f"{mode}: too few t('…') calls found: has the viewer changed shape?"
    missing = sorted(used - catalogue(mode)["en"].keys())
    assert not missing, f"{mode}: keys the viewer uses but its static/i18n.js lacks: {missing}"


@pytest.mark.parametrize("mode", MODES)
def test_every_catalogue_key_is_used(mode: str) -> None:
    js = sources(mode)
    quoted = {m.group(2) for m in QUOTED_KEY.finditer(js)}
    prefixes = key_prefixes(js)
    unused = sorted(k for k in catalogue(mode)["en"] if k not in quoted and not (prefixes and k.startswith(prefixes)))
    assert not unused, f"{mode}: keys in static/i18n.js that no code uses: {unused}"


@pytest.mark.parametrize("mode", MODES)
def test_no_english_label_is_hard_coded_in_the_viewer(mode: str) -> None:
    found = english_literals(viewer_js(mode))
    assert not found, f"{mode}: English labels in static/viewer.js, not in its i18n.js: {found}"
