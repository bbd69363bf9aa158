"""What a shared file says loses keys, tokens, environment values and home folders."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from pneuma.share.scrub import REDACTED, Scrubber, environment_secrets, is_secret_file

_ALNUM = string.ascii_letters + string.digits
_UPPER_DIGITS = string.ascii_uppercase + string.digits


def _word(alphabet: str, low: int, high: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=low, max_size=high)


_SECRETS = st.one_of(
    _word(_ALNUM + "_-", 20, 60).map(lambda s: "sk-ant-api03-" + s),
    _word(_ALNUM, 20, 40).map(lambda s: "sk-" + s),
    _word(_ALNUM, 36, 36).map(lambda s: "ghp_" + s),
    _word(_ALNUM + "-", 10, 40).map(lambda s: "xoxb-" + s),
    _word(_UPPER_DIGITS, 16, 16).map(lambda s: "AKIA" + s),
    st.tuples(_word(_ALNUM, 8, 30), _word(_ALNUM, 8, 30), _word(_ALNUM, 8, 30))
    .map(lambda t: "eyJ" + ".".join(t)),
)
# Text around a secret: words and punctuation that may touch it. A key
# glued to a word ("Ask-ant-...") is not a key's shape: a separator of the
# kinds that end a word comes between.
_SEPARATORS = st.sampled_from([" ", "\n", "=", ":", "\"", "'", "(", ")", ",", "`", "/"])
_AROUND = st.text(alphabet=string.ascii_letters + " .,:;()\n\"'", max_size=40)


@settings(max_examples=120, deadline=None)
@given(before=_AROUND, left=_SEPARATORS, secret=_SECRETS, right=_SEPARATORS, after=_AROUND)
def test_a_key_or_token_of_a_known_shape_never_survives(before: str, left: str, secret: str,
                                                         right: str, after: str) -> None:
    scrubbed = Scrubber()(before + left + secret + right + after)
    assert secret not in scrubbed
    # No piece of it is left either (the text around may hold the same
    # characters by chance: "AAAAAAAAAAAA" after a key ending so).
    tail = secret[-12:]
    assert scrubbed.count(tail) <= (before + after).count(tail)


@settings(max_examples=80, deadline=None)
@given(credential=_word(_ALNUM + "._-", 8, 60), name=st.sampled_from(
    ["Authorization: Bearer ", "api_key=", "ANTHROPIC_API_KEY=", "token: ", "password=",
     "--token="]))
def test_a_named_credential_loses_its_value_and_keeps_its_name(credential: str,
                                                               name: str) -> None:
    scrubbed = Scrubber()(f"curl -H '{name}{credential}' http://127.0.0.1/")
    assert credential not in scrubbed
    assert REDACTED in scrubbed


@settings(max_examples=80, deadline=None)
@given(value=_word(_ALNUM + "/+=", 9, 50), before=_AROUND, after=_AROUND)
def test_an_environment_value_and_the_session_token_never_survive(value: str, before: str,
                                                                  after: str) -> None:
    scrub = Scrubber.for_process(extra=["tok3n-of-the-session"],
                                 environ={"SOME_SERVICE_URL": value})
    scrubbed = scrub(before + value + " and tok3n-of-the-session " + after)
    assert value not in scrubbed
    assert "tok3n-of-the-session" not in scrubbed


@settings(max_examples=80, deadline=None)
@given(name=_word(string.ascii_lowercase + string.digits + "._-", 1, 20),
       rest=_word(string.ascii_lowercase + "/", 0, 30),
       prefix=st.sampled_from(["/home/", "/Users/", "C:\\Users\\", "C:\\\\Users\\\\"]))
def test_a_home_folder_becomes_a_tilde(name: str, rest: str, prefix: str) -> None:
    path = f"{prefix}{name}/{rest}"
    scrubbed = Scrubber()(f"wrote {path} now")
    assert f"{prefix}{name}" not in scrubbed
    assert "~" in scrubbed


@settings(max_examples=80, deadline=None)
@given(text=st.text(alphabet=string.ascii_lowercase + " .,\n", max_size=200))
def test_ordinary_text_is_left_as_it_is_and_scrubbing_twice_changes_nothing(text: str) -> None:
    scrub = Scrubber()
    assert scrub(text) == text
    once = scrub(f"{text} sk-ant-api03-{'x' * 30} /home/ana/deck {text}")
    assert scrub(once) == once


def test_a_url_s_user_and_password_go_and_its_host_stays() -> None:
    scrubbed = Scrubber()("git push https://ana:hunter2secret@git.example/deck.git main")
    assert "hunter2secret" not in scrubbed and "ana:" not in scrubbed
    assert "https://[redacted]@git.example/deck.git" in scrubbed


def test_root_s_home_and_a_path_merely_named_root() -> None:
    scrub = Scrubber()
    assert scrub("cat /root/.bashrc") == "cat ~/.bashrc"
    assert scrub("ls /srv/root/x") == "ls /srv/root/x"


def test_harmless_and_short_environment_values_are_not_secrets() -> None:
    found = environment_secrets({"PATH": "/usr/local/bin:/usr/bin", "LANG": "en_US.UTF-8",
                                 "DEBUG": "1", "MY_TOKEN": "abcd", "URL": "https://x.example"})
    assert found == ["abcd", "https://x.example"]


def test_files_that_hold_keys_by_custom_are_known() -> None:
    for path in (".env", "app/.env.local", "prod.env", ".netrc", "id_rsa", "certs/site.pem"):
        assert is_secret_file(path), path
    for path in ("slides.md", "environment.md", "keynote.html", "assets/key-visual.png"):
        assert not is_secret_file(path), path
