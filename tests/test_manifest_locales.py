"""Every text a built-in mode's manifest shows a person comes in English and
Simplified Chinese, and the locale is picked the same way in Python
(`localize`) as in the browser (`localized` in pneuma/web/lib/i18n.js,
checked in tests/browser/test_zh_cn_everywhere.py): the exact locale, then
the same language, then English, then the first entry.

What the manifest tells the agent (action and workflow descriptions,
prompts) stays English and is not checked here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pneuma.host.manifest import ModeManifest, localize
from pneuma.mode_check.locales import (
    person_facing_texts,  # `pneuma mode check`'s own list
)

PLUGINS = Path(__file__).resolve().parent.parent / "plugins"
MANIFESTS = sorted(PLUGINS.glob("*/pneuma_*/manifest.json"))
BUILT_IN = ("coauthor", "dashboard", "diagram", "doc", "draw", "illustrate", "mode-maker", "print", "slide", "video", "webcraft", "webgal")
CJK = re.compile(r"[\u3400-\u9fff]")


def test_every_built_in_manifest_is_checked() -> None:
    assert tuple(path.parent.parent.name for path in MANIFESTS) == BUILT_IN


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.parent.parent.name)
def test_person_facing_texts_are_in_english_and_chinese(path: Path) -> None:
    manifest = json.loads(path.read_text(encoding="utf-8"))
    ModeManifest.model_validate(manifest)  # localized texts are allowed where they appear
    texts = list(person_facing_texts(manifest))
    assert len(texts) > 5
    problems = []
    for where, text in texts:
        if not isinstance(text, dict) or set(text) != {"en", "zh-CN"}:
            problems.append(f"{where}: {text!r} is not {{'en': …, 'zh-CN': …}}")
            continue
        if not text["en"].strip() or CJK.search(text["en"]):
            problems.append(f"{where}: the English text is {text['en']!r}")
        if not CJK.search(text["zh-CN"]):
            problems.append(f"{where}: the Chinese text {text['zh-CN']!r} is not Chinese")
    assert not problems, "\n".join(problems)


def test_a_command_tooltip_is_a_localized_text() -> None:
    # The button's title in the shell; the prompt stays as written.
    manifest = json.loads((PLUGINS / "draw" / "pneuma_draw" / "manifest.json").read_text(encoding="utf-8"))
    command = ModeManifest.model_validate(manifest).viewer_api.commands[0]
    assert CJK.search(localize(command.description, "zh-CN"))
    assert not CJK.search(localize(command.description, "en") + command.prompt)


@pytest.mark.parametrize(("text", "locale", "expected"), [
    ({"en": "Slides", "zh-CN": "幻灯片"}, "zh-CN", "幻灯片"),      # exact
    ({"en": "Slides", "zh-CN": "幻灯片"}, "zh", "幻灯片"),         # same language
    ({"en": "Slides", "zh-CN": "幻灯片"}, "zh-TW", "幻灯片"),      # same language, other region
    ({"en": "Slides", "zh-CN": "幻灯片"}, "fr", "Slides"),         # English
    ({"de": "Folien", "ja": "スライド"}, "fr", "Folien"),          # the first entry
    ("Slides", "zh-CN", "Slides"),                                  # a plain string
    (None, "zh-CN", ""),
])  # fmt: skip
def test_localize_falls_back_exact_then_language_then_english_then_first(
        text: Any, locale: str, expected: str) -> None:
    assert localize(text, locale) == expected
