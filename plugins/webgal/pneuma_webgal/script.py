"""A WebGAL scene-script parser that reads lines the way the engine does.

It reproduces what the published ``webgal-parser`` 4.5.18 returns with the
command table the WebGAL engine registers at runtime (34 keywords plus the
internal ``__commment``): one sentence per physical line, the same command,
content, arguments (typed like JavaScript's ``Number``), speaker rules,
inline comments, preload assets and sub-scenes. Like the engine it never
fails; anything it does not understand is dialogue or a comment.

On top of the engine's view every sentence keeps what a validator needs:
the raw line, the content before path resolution, whether the statement
ended with ``;``, and the resolved resource references of every command
(including the ones the engine only fetches at run time).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

# --- the engine's command table -------------------------------------------------

#: Keywords the engine registers (webgal 4.5.18 .. 4.6.1), in the parser's enum order.
COMMANDS: tuple[str, ...] = (
    "say",
    "changeBg",
    "changeFigure",
    "bgm",
    "playVideo",
    "pixiPerform",
    "pixiInit",
    "intro",
    "miniAvatar",
    "changeScene",
    "choose",
    "end",
    "setComplexAnimation",
    "setFilter",
    "label",
    "jumpLabel",
    "setVar",
    "callScene",
    "showVars",
    "unlockCg",
    "unlockBgm",
    "filmMode",
    "setTextbox",
    "setAnimation",
    "playEffect",
    "setTempAnimation",
    "setTransform",
    "setTransition",
    "getUserInput",
    "applyStyle",
    "wait",
    "callSteam",
)

#: The parser's ``commandType`` enum numbers (4.x), by command name.
COMMAND_TYPE: dict[str, int] = {
    "say": 0,
    "changeBg": 1,
    "changeFigure": 2,
    "bgm": 3,
    "playVideo": 4,
    "pixiPerform": 5,
    "pixiInit": 6,
    "intro": 7,
    "miniAvatar": 8,
    "changeScene": 9,
    "choose": 10,
    "end": 11,
    "setComplexAnimation": 12,
    "setFilter": 13,
    "label": 14,
    "jumpLabel": 15,
    "chooseLabel": 16,
    "setVar": 17,
    "if": 18,
    "callScene": 19,
    "showVars": 20,
    "unlockCg": 21,
    "unlockBgm": 22,
    "filmMode": 23,
    "setTextbox": 24,
    "setAnimation": 25,
    "playEffect": 26,
    "setTempAnimation": 27,
    "comment": 28,
    "setTransform": 29,
    "setTransition": 30,
    "getUserInput": 31,
    "applyStyle": 32,
    "wait": 33,
    "callSteam": 34,
}

#: Script keyword -> command name. ``__commment`` (sic) is the engine's internal comment.
KEYWORDS: dict[str, str] = {name: name for name in COMMANDS}
KEYWORDS["__commment"] = "comment"

#: Commands the engine runs with an implicit ``-next`` (prepended to the arguments).
AUTO_NEXT: frozenset[str] = frozenset(
    {
        "bgm",
        "pixiPerform",
        "pixiInit",
        "miniAvatar",
        "label",
        "setVar",
        "unlockCg",
        "unlockBgm",
        "filmMode",
        "playEffect",
        "setTransition",
        "applyStyle",
        "callSteam",
        "comment",
    }
)

#: Keywords of other WebGAL versions that this engine does not register.
LEGACY_COMMANDS: dict[str, str] = {
    "setBgAni": "setAnimation",
    "setFigAni": "setAnimation",
    "setBgFilter": "setFilter",
    "setBgTransform": "setTransform",
    "setFigTransform": "setTransform",
    "if": "-when",
    "chooseLabel": "choose",
    "return": "end",
}

# fileType enum of the parser: which folder of game/ a reference lives in.
FILE_TYPE: dict[str, int] = {
    "background": 0,
    "bgm": 1,
    "figure": 2,
    "scene": 3,
    "tex": 4,
    "vocal": 5,
    "video": 6,
}

#: Command -> folder its content is resolved in.
CONTENT_FOLDER: dict[str, str] = {
    "changeBg": "background",
    "changeFigure": "figure",
    "miniAvatar": "figure",
    "bgm": "bgm",
    "unlockBgm": "bgm",
    "unlockCg": "background",
    "playEffect": "vocal",
    "playVideo": "video",
    "changeScene": "scene",
    "callScene": "scene",
}

#: Commands whose content the parser puts in the scene's preload list.
PRELOADED: frozenset[str] = frozenset({"changeBg", "changeFigure", "miniAvatar", "playVideo", "bgm"})

# --- JavaScript string semantics ------------------------------------------------

# Characters String.prototype.trim() removes (WhiteSpace + LineTerminator).
_JS_WS = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    """``String.prototype.trim`` (Python's strip() knows a different set)."""
    return text.strip(_JS_WS)


_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_RADIX = re.compile(r"0(?:[xX][0-9a-fA-F]+|[bB][01]+|[oO][0-7]+)")


def js_number(text: str) -> float | int | None:
    """``Number(text)``, or None where JavaScript gives NaN."""
    s = js_trim(text)
    if s == "":
        return 0
    if _DECIMAL.fullmatch(s):
        value = float(s)
    elif s in ("Infinity", "+Infinity"):
        return math.inf
    elif s == "-Infinity":
        return -math.inf
    elif _RADIX.fullmatch(s):
        return int(s, 0)
    else:
        return None
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def typed_value(raw: str) -> Any:
    """An argument value as the parser types it: bool, number or string."""
    if raw == "true":
        return True
    if raw == "false":
        return False
    number = js_number(raw)
    if number is not None:
        return number
    return raw


def json_value(value: Any) -> Any:
    """The value as JSON.stringify would write it (Infinity -> null, -0 -> 0)."""
    if isinstance(value, float):
        if math.isinf(value) or math.isnan(value):
            return None
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
    return value


# --- structures -----------------------------------------------------------------


@dataclass
class Ref:
    """A file a sentence refers to: ``name`` as written, relative to ``folder``."""

    folder: str  # background, figure, bgm, vocal, video, scene, animation
    name: str  # as written in the script (may contain {var} or ?query)
    role: str  # content, vocal, mouthOpen, enter, backgroundImage, choose, ...
    url: str = ""  # engine URL (./game/<folder>/<name>) or the http(s) URL

    @property
    def remote(self) -> bool:
        return "http://" in self.name or "https://" in self.name


@dataclass
class Sentence:
    """One physical line of a scene, as the engine reads it."""

    index: int  # 0-based line number == sentence index
    raw: str  # the physical line, without its line break
    command: str  # command name (say, changeBg, ..., comment)
    command_raw: str  # text before the first ':' (or the whole statement), trimmed
    head: str  # command_raw untrimmed (what the engine compared with the keywords)
    content: str  # content as the engine sees it (paths resolved)
    raw_content: str  # content before path resolution (trimmed)
    args: list[tuple[str, Any]] = field(default_factory=list)
    inline_comment: str = ""
    assets: list[tuple[str, int]] = field(default_factory=list)  # (url, fileType) preloaded
    sub_scene: list[str] = field(default_factory=list)
    has_colon: bool = False  # the statement had an ASCII ':'
    terminated: bool = False  # an unescaped ';' ends the statement
    statement: str = ""  # part before the first unescaped ';' (with '\\;' -> ';')

    @property
    def line(self) -> int:
        """1-based line number."""
        return self.index + 1

    @property
    def command_type(self) -> int:
        return COMMAND_TYPE[self.command]

    @property
    def speaker(self) -> str | None:
        return self.arg("speaker") if self.command == "say" else None

    def arg(self, key: str, default: Any = None) -> Any:
        """First value of an argument (the engine reads the first of duplicates)."""
        for k, v in self.args:
            if k == key:
                return v
        return default

    def has_arg(self, key: str) -> bool:
        return any(k == key for k, _ in self.args)

    def to_oracle(self) -> dict[str, Any]:
        """The sentence in the shape the oracle driver prints."""
        return {
            "line": self.index,
            "commandName": self.command,
            "command": self.command_type,
            "commandRaw": self.command_raw,
            "content": self.content,
            "args": [{"key": k, "value": json_value(v)} for k, v in self.args],
            "sentenceAssets": [
                {"name": url, "url": url, "lineNumber": 0, "type": t} for url, t in self.assets
            ],
            "subScene": list(self.sub_scene),
            "inlineComment": self.inline_comment,
        }


@dataclass
class Scene:
    name: str
    sentences: list[Sentence]

    @property
    def assets(self) -> list[tuple[str, int]]:
        return [a for s in self.sentences for a in s.assets]

    @property
    def sub_scenes(self) -> list[str]:
        return [x for s in self.sentences for x in s.sub_scene]

    @property
    def labels(self) -> dict[str, int]:
        """Label name -> 1-based line of its first definition."""
        found: dict[str, int] = {}
        for s in self.sentences:
            if s.command == "label" and s.content and s.content not in found:
                found[s.content] = s.line
        return found


# --- parsing --------------------------------------------------------------------

_SEMICOLON = re.compile(r"(?<!\\);")
_PIPE = re.compile(r"(?<!\\)\|")
_COLON = re.compile(r"(?<!\\):")
_VOCAL_NAME = re.compile(r".ogg|.mp3|.wav")  # dots unescaped, as in the engine


def resolve(name: str, folder: str) -> str:
    """The engine's asset URL for a name in a folder of game/."""
    if "http://" in name or "https://" in name:
        return name
    return f"./game/{folder}/{name}"


def parse_args(area: str) -> list[tuple[str, Any]]:
    """The argument area (starting at the first ' -') -> [(key, value)]."""
    result: list[tuple[str, Any]] = []
    for piece in area.split(" -"):
        if piece == "":
            continue
        eq = piece.find("=")
        name = piece if eq < 0 else piece[:eq]
        if _VOCAL_NAME.search(name.lower()):
            result.append(("vocal", resolve(piece, "vocal")))
            continue
        name = js_trim(name)
        if eq < 0:
            result.append((name, True))
        else:
            result.append((name, typed_value(js_trim(piece[eq + 1 :]))))
    return result


def _parse_choose(text: str, sentence: Sentence) -> str:
    options = []
    for option in _PIPE.split(text):
        parts = _COLON.split(option)
        label = parts[0]
        target = parts[1] if len(parts) > 1 else None
        if target is not None and "." in target:
            target = resolve(target, "scene")
        options.append(f"{label}:{target or ''}")
    content = "|".join(options)
    # The parser lists sub-scenes from the resolved content with plain (escape-blind) splits.
    for option in content.split("|"):
        pieces = option.split(":")
        if len(pieces) > 1 and "." in pieces[1]:
            sentence.sub_scene.append(pieces[1])
    return content


def parse_line(raw: str, index: int = 0) -> Sentence:
    """Parse one physical line (no line break) the way the engine does."""
    parts = _SEMICOLON.split(raw)
    statement = parts[0].replace("\\;", ";")
    inline_comment = js_trim(parts[1]) if len(parts) > 1 else ""
    terminated = len(parts) > 1

    if js_trim(statement) == "":
        return Sentence(
            index=index,
            raw=raw,
            command="comment",
            command_raw="comment",
            head="",
            content=inline_comment,
            raw_content=inline_comment,
            args=[("next", True)],
            inline_comment="",
            terminated=terminated,
            statement=statement,
        )

    colon = statement.find(":")
    if colon < 0:
        head, rest = statement, statement
    else:
        head, rest = statement[:colon], statement[colon + 1 :]
    command = KEYWORDS.get(head, "say")

    dash = rest.find(" -")
    user_args: list[tuple[str, Any]] = []
    if dash >= 0:
        user_args = parse_args(rest[dash:])
        rest = rest[:dash]
    text = js_trim(rest)

    sentence = Sentence(
        index=index,
        raw=raw,
        command=command,
        command_raw=js_trim(head),
        head=head,
        content="",
        raw_content=text,
        inline_comment=inline_comment,
        has_colon=colon >= 0,
        terminated=terminated,
        statement=statement,
    )

    content = "" if text in ("", "none") else text
    if command == "choose" and content:
        content = _parse_choose(content, sentence)
    elif command in CONTENT_FOLDER and content:
        content = resolve(content, CONTENT_FOLDER[command])
    if command in ("changeScene", "callScene"):
        sentence.sub_scene.append(content)
    if command in PRELOADED and content:
        sentence.assets.append((content, FILE_TYPE[CONTENT_FOLDER[command]]))
    sentence.content = content

    args: list[tuple[str, Any]] = []
    if command in AUTO_NEXT:
        args.append(("next", True))
    if command == "say" and colon >= 0 and head != "say":
        args.append(("speaker", head))
    args.extend(user_args)
    for key, value in user_args:
        if key == "vocal" and isinstance(value, str) and value != "":
            sentence.assets.append((value, FILE_TYPE["vocal"]))
    sentence.args = args
    return sentence


def split_lines(text: str) -> list[str]:
    """Scene text -> physical lines as the engine splits them (BOM dropped, \\r removed)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r", "").split("\n")


def parse_scene(text: str, name: str = "scene.txt") -> Scene:
    return Scene(name=name, sentences=[parse_line(line, i) for i, line in enumerate(split_lines(text))])


# --- references a sentence makes (for validation and resource listing) ----------

#: changeFigure args naming files in figure/.
FIGURE_FILE_ARGS: tuple[str, ...] = ("mouthOpen", "mouthHalfOpen", "mouthClose", "eyesOpen", "eyesClose")


def references(sentence: Sentence) -> list[Ref]:
    """Every file the engine will fetch for this sentence (preload or at run time)."""
    refs: list[Ref] = []
    cmd = sentence.command
    name = sentence.raw_content
    if cmd in CONTENT_FOLDER and cmd not in ("changeScene", "callScene") and name not in ("", "none"):
        folder = CONTENT_FOLDER[cmd]
        refs.append(Ref(folder, name, "content", resolve(name, folder)))
    if cmd in ("changeScene", "callScene") and name not in ("", "none"):
        refs.append(Ref("scene", name, "content", resolve(name, "scene")))
    for key, value in sentence.args:
        if key == "vocal" and isinstance(value, str) and value:
            prefix = "./game/vocal/"
            written = value[len(prefix) :] if value.startswith(prefix) else value
            refs.append(Ref("vocal", written, "vocal", resolve(written, "vocal")))
    if cmd == "changeFigure":
        for key in FIGURE_FILE_ARGS:
            value = sentence.arg(key)
            if isinstance(value, str) and value not in ("", "none"):
                refs.append(Ref("figure", value, key, resolve(value, "figure")))
    if cmd == "intro":
        value = sentence.arg("backgroundImage")
        if isinstance(value, str) and value not in ("", "none"):
            refs.append(Ref("background", value, "backgroundImage", resolve(value, "background")))
    return refs
