"""Helpers for starting `pneuma run` and looking at it in Chromium (used by
tests/browser/conftest.py and tests/test_new_mode.py).

``browser_problems()`` says what is missing for a browser test (Chromium,
Playwright, the vendored web files); ``read_first_line`` reads the ready
line of a `pneuma run` started with ``stdout=PIPE`` without blocking past
its timeout; ``READY_LINE`` parses it; ``kill_process_group`` stops a
`pneuma run` started with ``start_new_session=True`` and everything it
started.

Talking to a running server (anything with ``base`` and ``token``, such as
the conftest's server record): ``api_call`` makes an authorised request and
returns the status with the answer; ``viewer_action`` asks for a viewer
action as the agent does, ``viewer_answer`` does too and insists on 200.
On the page: ``send`` types a message into the composer and sends it;
``send_and_read`` also waits for the agent's turn and returns what the fake
CLI received.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Protocol

from pneuma.tools.chromium import CHROMIUM

REPO = Path(__file__).resolve().parents[2]
READY_LINE = re.compile(
    r"^\[pneuma\] ready (?P<base>http://127\.0\.0\.1:\d+)/\?session=(?P<sid>[^&\s]+)"
    r"&token=(?P<token>[A-Za-z0-9_\-]+)$"
)


def skip_without_a_browser(items: list[Any], folder: Path) -> None:
    """A conftest's collection hook: skip the tests under ``folder``, saying
    why, where a browser test cannot run."""
    import pytest

    problems = browser_problems()
    if not problems:
        return
    for item in items:
        if Path(str(item.fspath)).is_relative_to(folder):
            item.add_marker(pytest.mark.skip(reason="; ".join(problems)))


def browser_problems() -> list[str]:
    """Why a browser test cannot run here (empty when it can)."""
    problems = []
    if not Path(CHROMIUM).exists():
        problems.append(f"{CHROMIUM} is missing (scripts/install installs Debian's chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problems.append("playwright is not installed in this virtualenv (scripts/install)")
    if not (REPO / "pneuma" / "web" / "vendor" / "VERSIONS.json").is_file():
        problems.append("pneuma/web/vendor/ is missing: run scripts/build-web")
    return problems


def read_first_line(process: subprocess.Popen, timeout: float) -> str | None:
    """The first line of the process's stdout, or None when it ends or
    ``timeout`` passes first (a select loop: a plain readline could hang)."""
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    buffer = b""
    deadline = time.monotonic() + timeout
    try:
        while b"\n" not in buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                return None
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                return None
            buffer += chunk
    finally:
        selector.close()
    return buffer.split(b"\n", 1)[0].decode().rstrip("\r")


def kill_process_group(process: subprocess.Popen) -> None:
    """SIGTERM (a polite stop, up to 5 s), then SIGKILL to whatever is left
    in the process's group (the CLI it started, say)."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(5)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(2)


# --- a running server -------------------------------------------------------------


class Served(Protocol):
    """A running `pneuma run`: its base URL and its session token."""

    base: str
    token: str


def api_call(server: Served, method: str, path: str, body: Any = None, *, timeout: float = 30) -> tuple[int, Any]:
    """An authorised request, as the agent's tools make it: the status and
    the answer (parsed when it is JSON, else bytes). An error status is
    returned, not raised, so a test can assert on it."""
    request = urllib.request.Request(
        server.base + path, data=None if body is None else json.dumps(body).encode(), method=method,
        headers={"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw, status, kind = response.read(), response.status, response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as error:
        raw, status, kind = error.read(), error.code, error.headers.get("Content-Type", "")
    return status, (json.loads(raw or b"null") if "json" in kind else raw)


def viewer_action(
    server: Served, action_id: str, params: dict[str, Any] | None = None, *,
    wait: float | None = 10, timeout: float = 15,
) -> tuple[int, Any]:  # fmt: skip
    """POST /api/viewer/action as the agent does: the status and the answer.
    ``wait`` is how long the server waits for a tab (None: its default)."""
    query = "" if wait is None else f"?timeout={wait:g}"
    body = {"actionId": action_id, "params": params or {}}
    return api_call(server, "POST", f"/api/viewer/action{query}", body, timeout=timeout)


def viewer_answer(server: Served, action_id: str, params: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    """The viewer's answer to an action the server accepts (status 200)."""
    status, answer = viewer_action(server, action_id, params, **kwargs)
    assert status == 200, (status, answer)
    return answer


# --- the page ----------------------------------------------------------------------


def send(page: Any, text: str) -> None:
    """Type ``text`` into the chat's composer and press Enter."""
    box = page.locator(".composer textarea")
    box.fill(text)
    box.press("Enter")


def send_and_read(page: Any, fake_claude: Any, text: str, *, turns: int, timeout: float) -> str:
    """Send ``text``, wait until the page shows ``turns`` finished agent
    turns (result lines; a fresh session's hidden greeting is the first)
    and return the user message the fake CLI read last."""
    # Imported here: browser_problems() must be able to say that Playwright is missing.
    from playwright.sync_api import expect

    send(page, text)
    expect(page.locator(".result-line")).to_have_count(turns, timeout=timeout)
    return fake_claude.user_texts()[-1]


# --- English left in a Chinese page -------------------------------------------------

# Names that stay as they are in every language: the product, the agent and
# its models, keys on the keyboard, the other language's own name, codes.
ALLOWED_WORDS = {
    "Pneuma", "Claude", "Code", "Anthropic", "API", "Opus", "Sonnet", "Haiku",
    "Esc", "Enter", "Shift", "English", "US", "token", "PNG", "JPEG", "GIF", "WebP", "id",
}  # fmt: skip

# Every text the person can see on the page, and its tooltips, placeholders
# and accessible names, except inside the elements `skip` (a CSS selector)
# matches: what the person or the agent wrote, names of things, code.
VISIBLE_TEXTS = """(skip) => {
  const texts = [];
  const skipped = (el) => Boolean(skip) && Boolean(el.closest(skip));
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || skipped(el) || !el.checkVisibility()) continue;
    const text = node.textContent.trim();
    if (text) texts.push(text);
  }
  for (const el of document.body.querySelectorAll('[title], [placeholder], [aria-label], [alt]')) {
    // The result line's title is the token usage as JSON (field names).
    if (skipped(el) || el.matches('.result-line')) continue;
    for (const name of ['title', 'placeholder', 'aria-label', 'alt']) {
      const value = el.getAttribute(name);
      if (value) texts.push(value);
    }
  }
  texts.push(document.title);
  return texts;
}"""


def visible_texts(page: Any, skip: str) -> list[str]:
    """The page's visible texts and labels outside ``skip`` (VISIBLE_TEXTS)."""
    return page.evaluate(VISIBLE_TEXTS, skip)


def english_words(texts: list[str], allowed: set[str] | frozenset[str] = frozenset(ALLOWED_WORDS)) -> list[str]:
    """The English words in ``texts``, less commands in `backticks`, ids such
    as claude-sonnet-4-5 and the ``allowed`` names."""
    found = []
    for text in texts:
        prose = re.sub(r"`[^`]*`", "", text)  # `pneuma run` is a command, not prose
        prose = re.sub(r"\b[a-z]+(?:-[a-z0-9]+)+\b", "", prose)  # ids such as claude-sonnet-4-5
        found += [w for w in re.findall(r"[A-Za-z]{2,}", prose) if w not in allowed]
    return found


# --- Chinese drawn as glyphs, not as empty boxes -----------------------------------

# Used with page.evaluate(GLYPH_RENDERING, {"selectors": [...], "sample": "站台"}).
# Whether a string drew as glyphs or as empty boxes ("tofu") is told by
# drawing it on a canvas with the element's own font: boxes all look alike,
# whatever the character, and like the box of U+10FFFD, a code point no font has.
# For each selector: the element's font at a size where glyphs differ
# plainly, then the pixels of the sample, of each of its characters, and of
# as many U+10FFFD (tofu for sure) drawn with it.
GLYPH_RENDERING = """async ({selectors, sample}) => {
  await document.fonts.ready;
  const canvas = document.createElement('canvas');
  canvas.width = 160; canvas.height = 64;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const draw = (font, text) => {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.font = font;
    ctx.fillStyle = '#000';
    ctx.fillText(text, 4, 48);
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    let ink = 0;
    const alpha = [];
    for (let i = 3; i < data.length; i += 4) { alpha.push(data[i]); if (data[i]) ink += 1; }
    return {key: alpha.join(','), ink, width: ctx.measureText(text).width};
  };
  const tofu = String.fromCodePoint(0x10FFFD);
  const out = {};
  for (const selector of selectors) {
    const el = document.querySelector(selector);
    if (!el) { out[selector] = null; continue; }
    const cs = getComputedStyle(el);
    const font = `${cs.fontStyle} ${cs.fontWeight} 40px ${cs.fontFamily}`;
    // What the browser does for any text shown in this font: fetch the faces
    // (the slices) that cover it.
    await document.fonts.load(font, sample);
    const whole = draw(font, sample), boxes = draw(font, tofu.repeat([...sample].length));
    const chars = [...sample].map((ch) => draw(font, ch));
    out[selector] = {
      family: cs.fontFamily,
      checked: document.fonts.check(font, sample),
      inked: whole.ink > 0,
      differsFromTofu: whole.key !== boxes.key,
      charsDiffer: chars[0].key !== chars[1].key,
      charDiffersFromTofu: chars[0].key !== draw(font, tofu).key,
    };
  }
  return out;
}"""


def assert_drawn_as_glyphs(result: dict[str, Any], parts: tuple[str, ...], sample: str, *, where: str) -> None:
    """Every element of ``parts`` drew ``sample`` with real glyphs from loaded
    fonts (``result`` is what GLYPH_RENDERING gave); ``where`` names whose
    font is missing otherwise ("the shell", "the viewer")."""
    for selector in parts:
        drawn = result[selector]
        assert drawn is not None, f"{where} shows no {selector}"
        assert drawn["inked"], f"{selector}: {sample} draws nothing ({drawn['family']})"
        assert drawn["differsFromTofu"] and drawn["charsDiffer"] and drawn["charDiffersFromTofu"], (
            f"{selector}: {sample} draws as empty boxes with {drawn['family']} "
            f"(no CJK font: run scripts/build-web for {where}'s own)"
        )
        assert drawn["checked"], f"{selector}: the fonts for {sample} are not loaded ({drawn['family']})"


# --- the pointer ------------------------------------------------------------------


def drag(page: Any, start: tuple[float, float], end: tuple[float, float]) -> None:
    """Press at ``start``, move to ``end`` in steps (as a hand does), release."""
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(*end, steps=5)
    page.mouse.up()
