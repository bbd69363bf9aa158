"""A failing model API behind the REAL Codex CLI, as the person sees it in
Chromium: each retry a warning notice naming the attempt and the delay
under a title that does not blame Anthropic, then the error with the HTTP
status and the server's own message (docs/backends.md, "Model API failures")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.browser.browser_helpers import send
from tests.browser.test_codex_backend import (  # noqa: F401
    TURN,
    ThreadedFakes,
    codex_env,
    fakes,
    pytestmark,  # noqa: F401  (skips without Codex)
)
from tests.codex.codex_helpers import codex_config


def test_codex_retries_and_its_final_error_show_in_the_page(tmp_path: Path, fakes: ThreadedFakes,  # noqa: F811
                                                           pneuma_server: Any, open_page: Any,
                                                           shot: Any) -> None:
    env = codex_env(tmp_path, fakes)
    (Path(env["CODEX_HOME"]) / "config.toml").write_text(codex_config(fakes.api.base_url, retries=1))
    server = pneuma_server("slide", backend="codex", env=env)
    page = open_page(server)
    expect(page.locator(".result-line")).to_have_count(1, timeout=TURN)  # the greeting

    send(page, "[status: 503 Overloaded right now, try later]")
    retry = page.locator('.notice.warn[data-code="api_retry"]')
    expect(retry).to_have_count(1, timeout=TURN)
    expect(retry.locator(".notice-body")).to_contain_text("HTTP 503")
    expect(retry.locator(".notice-body")).to_contain_text("attempt 1 of 1")
    expect(retry.locator(".notice-title")).not_to_contain_text("Anthropic")
    final = page.locator('.notice.error[data-code="agent_error"]')
    expect(final).to_contain_text("Overloaded right now, try later", timeout=TURN)
    expect(final).not_to_contain_text("high demand")
    expect(page.locator(".result-line.is-error")).to_have_count(1, timeout=TURN)
    shot(page, "codex-model-errors")
