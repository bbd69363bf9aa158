"""Secrets out of what a shared file says (docs/sharing.md, "What is scrubbed").

A shared file goes to people who do not run Pneuma, so the conversation and
the tool summaries in it lose what the person would not hand over: API keys
and tokens (by their well-known shapes), a ``Bearer`` credential, JWTs, the
value after ``api_key=`` / ``token:`` / ``password=``, a URL's user and
password, the session's token, any value of the process environment that
appears (longer than 8 characters, or of a variable whose name says it is
a secret), and the home
folder in an absolute path (``/home/ana/x`` becomes ``~/x``).

The artifact's own files are not scrubbed: they are the work, shown as they
are (a file that looks like a place for secrets, ``.env`` and the like, is
left out of the shared file instead: ``is_secret_file``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

REDACTED = "[redacted]"
# Shorter values are too likely to be ordinary words ("true", "en_US").
MIN_ENV_VALUE = 9
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.I)
# Variables whose values are not secrets and often appear in ordinary text
# (a shell's path, a locale): replacing them would garble tool summaries.
_HARMLESS_ENV = frozenset({
    "PATH", "SHELL", "LANG", "LANGUAGE", "TERM", "PWD", "OLDPWD", "HOME", "USER", "LOGNAME",
    "SHLVL", "_", "TMPDIR", "TZ", "EDITOR", "VISUAL", "PAGER", "COLORTERM", "TERM_PROGRAM",
    "XDG_RUNTIME_DIR", "XDG_DATA_DIRS", "XDG_CONFIG_DIRS", "VIRTUAL_ENV", "PYTHONPATH",
    "MAIL", "DISPLAY", "HOSTTYPE", "OSTYPE", "MACHTYPE", "LS_COLORS",
})

# Well-known shapes of keys and tokens; each match becomes REDACTED.
_TOKEN_SHAPES = [
    re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"),                    # Anthropic, OpenAI
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),               # GitHub tokens
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bxox[abprse]-[A-Za-z0-9-]{10,}"),            # Slack
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),              # AWS access key ids
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}"),                    # Google API keys
    re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"),                 # GitLab
    re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"),  # JWT
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
               re.S),
]
# "Bearer <credential>", "api_key=<value>", "token: <value>", a URL's
# "user:password@": the name stays.
_NAMED_VALUES = [
    re.compile(r"(\b[a-z][a-z0-9+.-]*://)(?!\[redacted\])[^/\s:@]+:[^/\s@]+(?=@)", re.I),
    re.compile(r"(\b(?:Bearer|Basic|Token)\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"""(\b[\w-]*(?:api[_-]?key|token|secret|passw(?:or)?d|auth)["']?\s*[=:]\s*["']?)"""
               r"""(?!\[redacted\])[^\s"'&,;]{4,}""", re.I),
]
# An absolute path into a home folder: its home part becomes "~".
_HOME_PATHS = [
    re.compile(r"/(?:home|Users)/[^/\s\"'`]+(?=/|\b|$)"),
    re.compile(r"(?<![\w.])/root(?=/|\b|$)"),
    re.compile(r"\b[A-Za-z]:\\{1,2}Users\\{1,2}[^\\\s\"'`]+", re.I),
]


@dataclass
class Scrubber:
    """Scrubs text for a shared file. ``secrets``: exact values to take out
    wherever they appear (the session's token, the environment's values)."""

    secrets: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Longest first, so a value containing another goes out whole.
        unique = sorted({s for s in self.secrets if s}, key=len, reverse=True)
        self._exact = re.compile("|".join(map(re.escape, unique))) if unique else None

    @classmethod
    def for_process(cls, extra: Iterable[str] = (),
                    environ: Mapping[str, str] | None = None) -> "Scrubber":
        """A scrubber that also takes out this process's environment values
        and ``extra`` (the session's token)."""
        return cls([*extra, *environment_secrets(os.environ if environ is None else environ)])

    def __call__(self, text: str) -> str:
        if not text:
            return text
        if self._exact is not None:
            text = self._exact.sub(REDACTED, text)
        for shape in _TOKEN_SHAPES:
            text = shape.sub(REDACTED, text)
        for named in _NAMED_VALUES:
            text = named.sub(lambda m: m.group(1) + REDACTED, text)
        for home in _HOME_PATHS:
            text = home.sub("~", text)
        return text


def environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """The environment's values a shared file must not hold: those longer
    than 8 characters, and any of a variable named like a secret (4 or
    more characters), except a few well-known harmless variables."""
    found = []
    for name, value in environ.items():
        if name in _HARMLESS_ENV or name.startswith("LC_"):
            continue
        value = value.strip()
        if len(value) >= MIN_ENV_VALUE or (len(value) >= 4 and _SECRET_NAME.search(name)):
            found.append(value)
    return found


# Files that hold secrets by custom rather than work: never in a shared file.
_SECRET_FILE_NAMES = re.compile(
    r"^(?:\.env(?:\..*)?|.*\.env|\.envrc|\.netrc|\.npmrc|\.pypirc|\.git-credentials|"
    r"credentials(?:\.json)?|secrets?\.(?:json|ya?ml|toml)|id_(?:rsa|dsa|ecdsa|ed25519)|"
    r".*\.(?:pem|key|p12|pfx))$", re.I)


def is_secret_file(path: str) -> bool:
    """Whether ``path`` (relative, POSIX) is a file of the kind that holds
    keys (``.env``, ``.env.local``, ``.netrc``, ``id_rsa``, ``*.pem``…)."""
    return bool(_SECRET_FILE_NAMES.match(PurePosixPath(path).name))
