"""Fixtures for the CoAuthor runtime tests: a small paper workspace and a
way to run `pneuma coauthor ...` as a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic_api import FakeAnthropicAPI

PNEUMA = Path(sys.executable).with_name("pneuma")

INTRO = """\\section{Introduction}
\\label{sec:intro}
Writing tools that edit text silently lose the author's trust.
This paper argue that every change should be a patch.
A patch can be read before it lands.
"""


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PNEUMA_LOAD_PLUGINS"] = "coauthor"  # the host's conftest narrows plugins to slide
    e.pop("ANTHROPIC_API_KEY", None)
    return e


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    ws = tmp_path / "paper"
    (ws / "sections").mkdir(parents=True)
    (ws / "sections/intro.tex").write_text(INTRO, encoding="utf-8")
    (ws / "OUTLINE.md").write_text("# Outline\n\n## Introduction (`sections/intro.tex`)\n- Claim: silent edits lose trust.\n", encoding="utf-8")
    (ws / "BRIEF.md").write_text(
        "# Brief\n\n## Facts\n- Patches are reviewed.\n\n## Figures and tables\n\n- `figures/loop.pdf` (`fig:loop`): a diagram of the review loop.\n",
        encoding="utf-8",
    )
    (ws / ".pneuma").mkdir()
    (ws / ".pneuma/coauthor.toml").write_text('[build]\nlatexmk = "off"\n', encoding="utf-8")
    return ws


def run_cli(
    ws: Path, *args: str, stdin: str | None = None, check: bool = True, real: bool = False
) -> subprocess.CompletedProcess[str]:
    """`pneuma coauthor --workspace WS ARGS`. With ``real`` as a subprocess of
    the installed `pneuma` (proving the plugin hook wires it in); otherwise the
    same click command in-process, since each interpreter start costs ~1 s."""
    if real:
        proc = subprocess.run(
            [str(PNEUMA), "coauthor", "--workspace", str(ws), *args],
            input=stdin, capture_output=True, text=True, env=env(), timeout=60,
        )
    else:
        from click.testing import CliRunner

        from pneuma_coauthor.cli import coauthor

        result = CliRunner().invoke(coauthor, ["--workspace", str(ws), *args], input=stdin, catch_exceptions=False)
        proc = subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)
    if check:
        assert proc.returncode == 0, f"{args}: {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture
async def anthropic(monkeypatch: pytest.MonkeyPatch):
    """A fake Anthropic API on 127.0.0.1 that the coauthor agent calls."""
    async with FakeAnthropicAPI() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        yield fake
