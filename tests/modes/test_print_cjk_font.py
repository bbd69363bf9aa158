"""The print mode finds the shell's CJK font the one promised way: viewers
through /static/lib/cjk-font.js, exports through pneuma.api.cjk_font_dir()
(docs/viewer-contract.md, "Language"; docs/api.md), never a path of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pneuma_print

from pneuma.api import CJK_FONT_FAMILY, CJK_FONT_URL, cjk_font_dir, shell_static_dir

ROOT = Path(__file__).resolve().parents[2]


def test_the_promised_url_and_folder_are_one_file() -> None:
    served = Path(shell_static_dir()) / CJK_FONT_URL.removeprefix("/static/")
    assert served == Path(cjk_font_dir()) / "noto-sans-sc.css"


def test_the_viewer_module_promises_what_pneuma_api_names() -> None:
    module = (Path(shell_static_dir()) / "lib" / "cjk-font.js").read_text(encoding="utf-8")
    assert re.search(rf'CJK_FONT_URL = "{re.escape(CJK_FONT_URL)}"', module)
    assert re.search(rf'CJK_FONT_FAMILY = "{re.escape(CJK_FONT_FAMILY)}"', module)


def test_the_print_mode_names_no_font_path_of_its_own() -> None:
    package = Path(pneuma_print.__file__).parent
    own = [path for path in package.rglob("*") if path.suffix in (".py", ".js")
           and "vendor" not in path.parts
           and re.search(r"cjk-font/|[\"']cjk-font[\"']", path.read_text(encoding="utf-8"))]
    assert own == [], f"print finds the font itself instead of through the promise: {own}"
    from pneuma_print import cjk_font
    assert cjk_font.font_dir() == Path(cjk_font_dir())
