"""The shell speaks English and Simplified Chinese from two catalogues
(pneuma/web/i18n/*.json, loaded by pneuma/web/lib/i18n.js).

A person whose page is in Chinese must never meet an English label because
a key was added to one catalogue and not the other, nor see a raw key or a
stray ``{placeholder}``. These checks read the shell's source: every
``t('key')`` it calls exists in both catalogues, the catalogues hold the
same keys with the same placeholders, no key is left unused, and the
templates hold no hard-coded English label.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

WEB = Path(__file__).resolve().parent.parent / "pneuma" / "web"
CATALOGUES = WEB / "i18n"
LOCALES = ("en", "zh-CN")
# The shell's own code (not vendor/ nor node_modules/), and the backends'
# browser modules, which translate through the shell's t() (lib/backend-ui.js).
SOURCES = [WEB / "app.js", WEB / "boot.js", WEB / "launcher.js",
           *sorted((WEB / "lib").glob("*.js")),
           *sorted((WEB.parent / "agents").glob("*/static/*.js")),
           # the shared file's page (pneuma/share/static/player.js) translates with the shell's t()
           *sorted((WEB.parent / "share" / "static").glob("*.js"))]

T_CALL = re.compile(r"""\bt\(\s*(['"])([^'"\\]+)\1""")
PLACEHOLDER = re.compile(r"\{(\w+)\}")
PLURAL_FORMS = {"zero", "one", "two", "few", "many", "other"}


def load(locale: str) -> dict[str, Any]:
    return json.loads((CATALOGUES / f"{locale}.json").read_text(encoding="utf-8"))


def source_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in SOURCES)


def keys_called(text: str) -> set[str]:
    return {match.group(2) for match in T_CALL.finditer(text)}


def placeholders(value: Any) -> set[str]:
    """The {names} a value uses; for a plural entry, those of all its forms."""
    if isinstance(value, dict):
        return set().union(*(placeholders(v) for v in value.values()))
    return set(PLACEHOLDER.findall(value))


def test_the_catalogue_key_parser_sees_both_quote_styles() -> None:
    sample = "t('a.b') + t(\"c.d\", { n: 1 }) + at('no') + t(`tpl`)"
    assert keys_called(sample) == {"a.b", "c.d"}


@pytest.mark.parametrize("locale", LOCALES)
def test_every_key_the_shell_uses_is_in_the_catalogue(locale: str) -> None:
    catalogue = load(locale)
    used = keys_called(source_text())
    assert len(used) > 50, "the parser found too few t('…') calls: has the shell changed shape?"
    missing = sorted(used - catalogue.keys())
    assert not missing, f"keys used by the shell but missing from {locale}.json: {missing}"


def test_the_catalogues_hold_the_same_keys() -> None:
    en, zh = load("en"), load("zh-CN")
    assert sorted(en.keys() - zh.keys()) == [], "in en.json only"
    assert sorted(zh.keys() - en.keys()) == [], "in zh-CN.json only"


def test_placeholders_match_between_locales() -> None:
    en, zh = load("en"), load("zh-CN")
    differ = {key: (sorted(placeholders(en[key])), sorted(placeholders(zh[key])))
              for key in en.keys() & zh.keys()
              if placeholders(en[key]) != placeholders(zh[key])}
    assert not differ, f"placeholders differ (en, zh-CN): {differ}"


@pytest.mark.parametrize("locale", LOCALES)
def test_values_are_texts_or_plural_forms_with_a_count(locale: str) -> None:
    for key, value in load(locale).items():
        if isinstance(value, dict):
            assert "other" in value and set(value) <= PLURAL_FORMS, key
            assert "count" in placeholders(value), f"{key}: a plural entry needs {{count}}"
            assert all(isinstance(v, str) and v for v in value.values()), key
        else:
            assert isinstance(value, str) and value.strip(), f"{key} is empty in {locale}.json"


def test_chinese_texts_are_translated() -> None:
    # A value copied from English unchanged is a forgotten translation,
    # unless it is only names, codes or punctuation.
    en, zh = load("en"), load("zh-CN")
    same = [key for key in en if en[key] == zh[key] and re.search(r"[a-z]{3,}", json.dumps(en[key]))]
    assert not same, f"zh-CN.json repeats the English text of {same}"


def test_every_catalogue_key_is_used_by_the_shell() -> None:
    # Keys reached indirectly (a table of keys, then t(key)) still appear
    # as string literals in the source.
    text = source_text()
    unused = sorted(key for key in load("en") if f"'{key}'" not in text and f'"{key}"' not in text)
    assert not unused, f"catalogue keys no code uses: {unused}"


# Literal English in the templates of app.js: text between tags, or a
# label attribute with a quoted value. Technical snippets are allowed.
TEMPLATE_TEXT = re.compile(r">\s*([^<>${}`]*[A-Za-z]{3,}[^<>${}`]*?)\s*<")
LABEL_ATTRIBUTE = re.compile(r"""\b(title|placeholder|aria-label|alt)=(["'])([^"']*[A-Za-z]{3,}[^"']*)\2""")
ALLOWED_LITERALS = {"Pneuma", "pneuma browser-client --server"}


@pytest.mark.parametrize("page", ["app.js", "launcher.js"])
def test_the_shell_templates_have_no_hard_coded_english(page: str) -> None:
    app = (WEB / page).read_text(encoding="utf-8")
    templates = re.findall(r"html`(.*?)`", app, flags=re.S)
    found = []
    for template in templates:
        found += [m.group(1).strip() for m in TEMPLATE_TEXT.finditer(template)]
        found += [m.group(0) for m in LABEL_ATTRIBUTE.finditer(template)]
    found = [text for text in found if text not in ALLOWED_LITERALS]
    assert not found, f"English in {page} templates, not in the catalogues: {found}"


# One meaning of "turn" (issue 25, item 9): a turn is the person's message and
# what the agent did in answer to it (what "Rewind to before turn N" counts).
# The model's round trips inside one turn, which the result line counts, are
# "steps"; calling them turns would make "Done · 3 turns" disagree with Rewind.
ROUND_TRIP_WORDS = {"en": "step", "zh-CN": "步"}
TURN_WORDS = {"en": "turn", "zh-CN": "轮"}


@pytest.mark.parametrize("locale", LOCALES)
def test_the_result_line_counts_steps_not_turns(locale: str) -> None:
    catalogue = load(locale)
    assert "result.turns" not in catalogue
    forms = catalogue["result.steps"]
    texts = list(forms.values()) if isinstance(forms, dict) else [forms]
    for text in texts:
        assert ROUND_TRIP_WORDS[locale] in text.lower()
        assert TURN_WORDS[locale] not in text.lower()
    assert TURN_WORDS[locale] in catalogue["rewind.confirmTitle"].lower()


def test_the_shell_labels_round_trips_as_steps() -> None:
    chat = (WEB / "lib" / "chat.js").read_text(encoding="utf-8")
    assert "t('result.steps', { count: d.num_turns })" in chat
