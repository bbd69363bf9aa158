"""The words of Codex's model-API failures, from notifications and log
lines as the real Codex CLI 0.169.0 writes them (recorded against the fake
Responses API): the status and the server's message replace Codex's
generic text, and each retry names its attempt and delay."""

from __future__ import annotations

import asyncio

from pneuma.agents.codex.binary import model_endpoint
from pneuma.agents.codex.model_errors import ModelTrouble, strip_ansi

URL = "http://127.0.0.1:44957/v1/responses"
GENERIC = "We\u2019re currently experiencing high demand, which may cause temporary errors."
ANSWER_500 = (f"\x1b[2m2026-11-29T07:34:17Z\x1b[0m DEBUG codex_http_client::client: Request completed "
              f"method=POST url={URL} status=500 Internal Server Error headers={{\"openai-organization\": "
              "\"org-secret\"}} version=HTTP/1.1")
RETRY_500 = ("2026-11-29T07:33:48Z  WARN codex_core::responses_retry: stream disconnected - retrying "
             "sampling request (1/2 in 208ms)... turn_id=x retries=1 max_retries=2 "
             f"sampling_error={GENERIC}")
RETRY_NETWORK = ("2026-11-29T07:37:06Z  WARN codex_core::responses_retry: stream connection failed; "
                 "waiting to retry turn_id=x error=Connection failed: error sending request "
                 "retry_delay=5s")


def notice(message: str, info: object, details: str | None = None) -> dict[str, object]:
    return {"message": message, "codexErrorInfo": info, "additionalDetails": details}


def test_a_500_is_its_status_and_address_not_codexs_generic_text() -> None:
    trouble = ModelTrouble()
    assert trouble.note_stderr(strip_ansi(ANSWER_500))  # kept out of the page: its headers
    assert not trouble.note_stderr(RETRY_500)
    delay = asyncio.run(trouble.next_delay(wait=0))
    retry = trouble.retry_notice(notice("Reconnecting... 1/2",
                                        {"responseStreamDisconnected": {"httpStatusCode": None}},
                                        GENERIC), delay, None)
    assert retry == (f"The model API answered HTTP 500 Internal Server Error ({URL}); "
                     "Codex tries again in 0.2 s (attempt 1 of 2).")
    final = trouble.final_error(notice(GENERIC, "internalServerError"), None)
    assert final == f"The model API answered HTTP 500 Internal Server Error ({URL}). Codex ended the turn."


def test_a_500_without_its_log_line_is_still_a_500() -> None:
    final = ModelTrouble().final_error(notice(GENERIC, "internalServerError"), None)
    assert "HTTP 500" in final and "high demand" not in final


def test_other_statuses_carry_the_servers_message() -> None:
    trouble = ModelTrouble()
    text = f"unexpected status 503 Service Unavailable: Overloaded, try later, url: {URL}"
    retry = trouble.retry_notice(notice("Reconnecting... 1/1",
                                        {"responseStreamDisconnected": {"httpStatusCode": 503}},
                                        text), 0.363, None)
    assert retry == ("The model API answered HTTP 503 Service Unavailable: Overloaded, try later "
                     f"({URL}); Codex tries again in 0.4 s (attempt 1 of 1).")
    body = '{"error": {"message": "scripted error 400", "type": "invalid_request_error"}}'
    final = trouble.final_error(notice(body, "other"), None)
    assert final == "The model API failed: scripted error 400. Codex ended the turn."


def test_an_unreachable_endpoint_names_the_address_and_the_wait() -> None:
    trouble = ModelTrouble()
    trouble.note_stderr(RETRY_NETWORK)
    delay = asyncio.run(trouble.next_delay(wait=0))
    retry = trouble.retry_notice(
        notice("Reconnecting... waiting for network",
               {"responseStreamDisconnected": {"httpStatusCode": None}},
               "Connection failed: error sending request"), delay, "http://127.0.0.1:9/v1")
    assert retry == ("Codex cannot reach the model API at http://127.0.0.1:9/v1 (Connection failed: "
                     "error sending request); Codex tries again in 5 s, until it can or Stop is pressed.")


def test_a_retry_without_its_log_line_is_told_without_a_delay() -> None:
    trouble = ModelTrouble()
    delay = asyncio.run(trouble.next_delay(wait=0.01))
    assert delay is None
    text = trouble.retry_notice(notice("Reconnecting... 2/5", None, "boom"), delay, None)
    assert text == "The model API failed: boom; Codex tries again soon (attempt 2 of 5)."


def test_the_endpoint_is_the_providers_base_url_or_the_openai_api(tmp_path) -> None:
    home = tmp_path / "codex"
    home.mkdir()
    env = {"CODEX_HOME": str(home)}
    assert model_endpoint(env) is None  # a ChatGPT login's address is Codex's business
    assert model_endpoint({**env, "OPENAI_API_KEY": "sk"}) == "https://api.openai.com/v1"
    (home / "config.toml").write_text('model_provider = "local"\n[model_providers.local]\n'
                                      'base_url = "http://127.0.0.1:8000/v1"\n')
    assert model_endpoint(env) == "http://127.0.0.1:8000/v1"


def test_a_429_codex_stopped_retrying_is_its_status_not_codexs_summary() -> None:
    trouble = ModelTrouble()
    trouble.note_stderr(ANSWER_500.replace("status=500 Internal Server Error",
                                           "status=429 Too Many Requests"))
    final = trouble.final_error(notice("exceeded retry limit, last status: 429 Too Many Requests",
                                       {"responseTooManyFailedAttempts": {"httpStatusCode": 429}}),
                                None)
    assert final == f"The model API answered HTTP 429 Too Many Requests ({URL}). Codex ended the turn."


def test_a_400_whose_log_line_comes_after_the_notification_still_has_its_status() -> None:
    """On a busy machine Codex's stderr is read after the error notification
    on stdout: the backend waits a little for the answer's log line."""
    body = '{"error": {"message": "bad input", "type": "invalid_request_error", "code": null}}'
    answer_400 = strip_ansi(ANSWER_500).replace("status=500 Internal Server Error", "status=400 Bad Request")

    async def late_line() -> str:
        trouble = ModelTrouble()
        error = notice(body, "badRequest")
        assert trouble.cause(error).status is None  # what the notification alone says
        asyncio.get_running_loop().call_later(0.05, trouble.note_stderr, answer_400)
        await trouble.answer_logged(wait=2)
        return trouble.final_error(error, None)

    assert asyncio.run(late_line()) == (f"The model API answered HTTP 400 Bad Request: bad input ({URL}). "
                                        "Codex ended the turn.")
