"""A game's scenes as a readable script: one HTML page (export.py's
``script-html``, printed for ``script-pdf``).

Each scene is a section (start.txt first); each line reads as it plays:
the speaker and what they say (a line without a speaker continues the last
one, ``:text`` is narration, as in the engine), the intro's lines, a
choice's options and every scene jump or label jump as a link to its
section or label, and the stage directions a reader follows (background,
figure, music, video, end). Variables, transforms and comments are the
engine's business and are left out. Everything from the scripts is
escaped: a line of the game is text on this page, never markup.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from .game_files import read_config, read_game_text
from .script import Sentence, parse_scene
from .validate import choose_options

_WORDS = {
    "en": {"scene": "Scene", "choice": "Choice", "goto": "Go to", "background": "Background",
           "figure": "Figure", "music": "Music", "video": "Video", "end": "The end",
           "contents": "Scenes", "narration": "Narration", "call": "Play scene", "label": "Label"},
    "zh-CN": {"scene": "场景", "choice": "选项", "goto": "转到", "background": "背景",
              "figure": "立绘", "music": "音乐", "video": "视频", "end": "结束",
              "contents": "场景列表", "narration": "旁白", "call": "调用场景", "label": "标签"},
}

_CSS = """
body { font: 16px/1.6 system-ui, "Noto Sans CJK SC", "Source Han Sans SC", sans-serif, "Pneuma CJK";
  color: #1d1d1f;
  max-width: 44rem; margin: 0 auto; padding: 2rem 1.25rem; }
h1 { font-size: 1.9rem; margin: 0 0 .4rem; } h2 { font-size: 1.35rem; border-bottom: 1px solid #ddd;
  padding-bottom: .25rem; margin-top: 2.5rem; }
nav ol { padding-left: 1.3rem; } a { color: #0b5fca; text-decoration: none; }
p { margin: .35rem 0; } .speaker { font-weight: 600; margin-right: .5em; }
.speaker::after { content: ":"; } .narration { color: #444; font-style: italic; }
.stage { color: #777; font-size: .85rem; margin: .6rem 0 .2rem; }
.choice { border-left: 3px solid #0b5fca; padding: .2rem .8rem; margin: .6rem 0; }
.choice ul { margin: .2rem 0; padding-left: 1.1rem; } .label { color: #777; font-size: .8rem; }
.line-no { color: #aaa; font-size: .7rem; margin-right: .6em; font-variant-numeric: tabular-nums; }
@media print { body { max-width: none; padding: 0; font-size: 11pt; } section { break-before: page; }
  h2 { break-after: avoid; } .choice { break-inside: avoid; } }
"""


def scene_anchor(scene: str) -> str:
    return "scene-" + scene


def label_anchor(scene: str, label: str) -> str:
    return f"label-{scene}-{label}"


def _link(anchor: str, text: str) -> str:
    return f'<a href="#{html.escape(anchor, quote=True)}">{html.escape(text)}</a>'


class _SceneWriter:
    """One scene's lines as HTML, remembering who spoke last."""

    def __init__(self, scene: str, words: dict[str, str]) -> None:
        self.scene = scene
        self.words = words
        self.speaker = ""
        self.parts: list[str] = []

    def stage(self, key: str, what: str) -> str:
        return f'<p class="stage">[{self.words[key]}: {html.escape(what)}]</p>'

    def target(self, target: str) -> str:
        """A link to a scene (a file name) or to a label of this scene."""
        if "." in target:
            return _link(scene_anchor(target), target)
        return _link(label_anchor(self.scene, target), target)

    def say(self, s: Sentence) -> str:
        if s.has_colon:
            self.speaker = "" if s.head == "" else str(s.speaker or "")
        text = html.escape(s.raw_content)
        if not self.speaker:
            return f'<p class="narration">{text}</p>'
        return f'<p><span class="speaker">{html.escape(self.speaker)}</span>{text}</p>'

    def choose(self, s: Sentence) -> str:
        items = "".join(f"<li>{html.escape(text)}" + (f" → {self.target(target)}" if target else "") + "</li>"
                        for text, target in choose_options(s))
        return f'<div class="choice">{self.words["choice"]}<ul>{items}</ul></div>'

    def line(self, s: Sentence) -> str:
        handlers: dict[str, Callable[[Sentence], str]] = {
            "say": self.say,
            "choose": self.choose,
            "intro": lambda s: "".join(f'<p class="narration">{html.escape(part)}</p>'
                                       for part in s.raw_content.split("|") if part.strip()),
            "changeScene": lambda s: f'<p class="stage">{self.words["goto"]} {self.target(s.raw_content)}</p>',
            "callScene": lambda s: f'<p class="stage">{self.words["call"]} {self.target(s.raw_content)}</p>',
            "jumpLabel": lambda s: f'<p class="stage">{self.words["goto"]} {self.target(s.raw_content)}</p>',
            "label": lambda s: (f'<p class="label" id="{html.escape(label_anchor(self.scene, s.raw_content))}">'
                                f'{self.words["label"]}: {html.escape(s.raw_content)}</p>'),
            "changeBg": lambda s: self.stage("background", s.raw_content or "none"),
            "changeFigure": lambda s: self.stage("figure", s.raw_content or "none"),
            "bgm": lambda s: self.stage("music", s.raw_content or "none"),
            "playVideo": lambda s: self.stage("video", s.raw_content),
            "end": lambda s: f'<p class="stage">[{self.words["end"]}]</p>',
        }
        handler = handlers.get(s.command)
        if handler is None or (s.command == "say" and not s.raw_content):
            return ""
        return handler(s)

    def write(self, text: str) -> str:
        lines = [self.line(s) for s in parse_scene(text, self.scene).sentences]
        body = "\n".join(line for line in lines if line)
        return (f'<section id="{html.escape(scene_anchor(self.scene), quote=True)}">'
                f"<h2>{self.words['scene']}: {html.escape(self.scene)}</h2>\n{body}\n</section>")


def fallback_font_css(font: Path | None) -> str:
    """``@font-face`` for "Pneuma CJK", the last font of the page's list: for
    the PDF, the engine's own Chinese font, so a Chinese game prints as
    Chinese on a machine that has no Chinese font (Chromium takes only the
    glyphs the page uses into the PDF)."""
    if font is None:
        return ""
    return f'@font-face {{ font-family: "Pneuma CJK"; src: url("{font.as_uri()}"); }}\n'


def script_page(game: Path, scenes: list[str], language: str, *, font_css: str = "") -> str:
    """The page: the game's name, the list of scenes, then every scene;
    ``font_css`` goes first in its stylesheet."""
    lang = "zh-CN" if language.lower().startswith("zh") else "en"
    words = _WORDS[lang]
    title = read_config(game).get("Game_name") or game.parent.name
    sections = []
    for scene in scenes:
        text = read_game_text(game, f"scene/{scene}")
        sections.append(_SceneWriter(scene, words).write(text))
    contents = "".join(f"<li>{_link(scene_anchor(scene), scene)}</li>" for scene in scenes)
    return ('<!doctype html>\n<html lang="' + lang + '"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta name="generator" content="Pneuma webgal script export">'
            f"<title>{html.escape(title)}</title><style>{font_css}{_CSS}</style></head>\n<body>"
            f"<h1>{html.escape(title)}</h1><nav><h3>{words['contents']}</h3><ol>{contents}</ol></nav>\n"
            + "\n".join(sections) + "\n</body></html>\n")
