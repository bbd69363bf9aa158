"""The `locales` check: every text a mode shows a person exists in every
locale the shell speaks (English and Simplified Chinese): the manifest's
person-facing fields and the viewer's catalogue ``static/i18n.js``
(docs/viewer-contract.md, "Language"). tests/test_manifest_locales.py and
tests/test_viewer_i18n_catalogues.py hold the built-in modes to the same
parsers, and further (translated, not only present).

What a mode tells the agent (action descriptions, prompts, context) stays
English and is not checked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pneuma.mode_check.report import CheckResult

SHELL_LOCALES = ("en", "zh-CN")
CATALOGUE_FILE = "i18n.js"
CATALOGUE = re.compile(r"export const MESSAGES = (\{.*?\n\});", re.S)
# t("key"), tr("key"), this.t('key'), this.viewer.t("key"); not at("…").
KEY_CALL = re.compile(r"""(?<![\w$])tr?\(\s*(['"])([^'"\\]+)\1""")
# A key built in a template literal (t(`kind.${d.kind}`)) is checked by its prefix.
KEY_PREFIX = re.compile(r"""(?<![\w$])tr?\(\s*`([\w.]+)\$\{""")
# A key that reaches t() through a variable (slide-doc.js's manifest errors).
ERROR_KEY = re.compile(r"""\berrorKey:\s*(['"])([\w.]+)\1""")
PLACEHOLDER = re.compile(r"\{(\w+)\}")
# Any quoted key-shaped literal: a key passed along before t(key) is used.
QUOTED_KEY = re.compile(r"""(['"])([\w.]+)\1""")


def person_facing_texts(manifest: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(where, text) for each text the shell, the launcher or `pneuma init`
    shows a person: names, descriptions, parameter labels, action, command,
    workflow and step labels, and the command buttons' tooltips."""
    yield "displayName", manifest.get("displayName")
    yield "description", manifest.get("description")
    for param in manifest.get("init", {}).get("params", []):
        yield f"init.params.{param.get('name')}.label", param.get("label")
        if param.get("description"):
            yield f"init.params.{param.get('name')}.description", param["description"]
    api = manifest.get("viewerApi", {})
    for action in api.get("actions", []):
        yield f"actions.{action.get('id')}.label", action.get("label")
    for command in api.get("commands", []):
        yield f"commands.{command.get('id')}.label", command.get("label")
        yield f"commands.{command.get('id')}.description", command.get("description")
    for workflow in manifest.get("workflows", []):
        yield f"workflows.{workflow.get('id')}.label", workflow.get("label")
        for step in workflow.get("steps", []):
            yield f"workflows.{workflow.get('id')}.{step.get('id')}.label", step.get("label")


def parse_catalogue(js: str) -> dict[str, dict[str, str]] | None:
    """The ``MESSAGES`` block of an i18n.js, or None when it has none."""
    match = CATALOGUE.search(js)
    if not match:
        return None
    data: dict[str, dict[str, str]] = json.loads(match.group(1))
    return data


def used_keys(js: str) -> set[str]:
    return {m.group(2) for pattern in (KEY_CALL, ERROR_KEY) for m in pattern.finditer(js)}


def key_prefixes(js: str) -> tuple[str, ...]:
    return tuple(m.group(1) for m in KEY_PREFIX.finditer(js))


def manifest_problems(manifest: dict[str, Any]) -> list[str]:
    problems = []
    for where, text in person_facing_texts(manifest):
        if text is None or text == "":
            continue
        if not isinstance(text, dict):
            problems.append(f"manifest {where}: {text!r} has no {' / '.join(SHELL_LOCALES[1:])} text")
            continue
        for locale in SHELL_LOCALES:
            value = text.get(locale)
            if not isinstance(value, str) or not value.strip():
                problems.append(f"manifest {where}: no {locale} text")
    return problems


def catalogue_problems(messages: dict[str, dict[str, str]], viewer_js: str) -> list[str]:
    problems = []
    base = messages.get("en", {})
    for locale in SHELL_LOCALES:
        texts = messages.get(locale)
        if not isinstance(texts, dict):
            problems.append(f"i18n.js: no {locale} messages")
            continue
        problems += [f"i18n.js: '{key}' has no {locale} text" for key in sorted(base.keys() - texts.keys())]
        problems += [f"i18n.js: '{key}' is in {locale} only" for key in sorted(texts.keys() - base.keys())]
        problems += [f"i18n.js: '{key}' is empty in {locale}" for key, value in texts.items()
                     if not (isinstance(value, str) and value.strip())]
        problems += [f"i18n.js: '{key}' has other placeholders in {locale}" for key, value in texts.items()
                     if key in base and isinstance(value, str) and isinstance(base[key], str)
                     and set(PLACEHOLDER.findall(value)) != set(PLACEHOLDER.findall(base[key]))]
    missing = sorted(used_keys(viewer_js) - base.keys())
    problems += [f"the viewer asks for '{key}', which i18n.js lacks" for key in missing]
    return problems


def viewer_sources(static_dir: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(static_dir.glob("*.js"))
                     if p.name != CATALOGUE_FILE)


def check_locales(manifest: dict[str, Any], static_dir: Path) -> CheckResult:
    problems = manifest_problems(manifest)
    catalogue_file = static_dir / CATALOGUE_FILE
    keys = 0
    if catalogue_file.is_file():
        try:
            messages = parse_catalogue(catalogue_file.read_text(encoding="utf-8"))
        except ValueError as exc:
            messages = None
            problems.append(f"i18n.js: its MESSAGES block is not JSON ({exc})")
        if messages is not None:
            keys = len(messages.get("en", {}))
            problems += catalogue_problems(messages, viewer_sources(static_dir))
    elif used_keys(viewer_sources(static_dir)) if static_dir.is_dir() else False:
        problems.append("the viewer asks for message keys but has no static/i18n.js catalogue")
    locales = " and ".join(SHELL_LOCALES)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return CheckResult("locales", False, problems[0] + more, {"problems": problems})
    return CheckResult("locales", True, f"every person-facing text is in {locales}"
                       + (f" ({keys} catalogue keys)" if keys else ""))
