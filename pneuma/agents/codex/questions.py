"""Codex's questions to the person (``item/tool/requestUserInput``, the
app-server's EXPERIMENTAL request of the pinned 0.169.0) shown on the same
question card as Claude Code's AskUserQuestion (docs/backends.md,
"Questions and plans").

The card speaks Claude Code's shape: the request's input is
``{questions: [{question, header, options: [{label, description}],
multiSelect}]}`` and the answer comes back as ``updated_input.answers``
{question text: answer}. Codex asks one answer per question (it has no
multi-select) and names questions by ``id``; this module translates both ways.
"""

from __future__ import annotations

from typing import Any

USER_INPUT_METHOD = "item/tool/requestUserInput"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def question_input(params: dict[str, Any]) -> dict[str, Any]:
    """The card's input for Codex's request: its questions in Claude Code's
    shape, each keeping Codex's ``id`` (an unusable entry is left out)."""
    questions: list[dict[str, Any]] = []
    for raw in params.get("questions") or []:
        if not isinstance(raw, dict) or not _text(raw.get("question")):
            continue
        options = [{"label": _text(o.get("label")), "description": _text(o.get("description"))}
                   for o in raw.get("options") or [] if isinstance(o, dict) and _text(o.get("label"))]
        questions.append({"id": _text(raw.get("id")), "question": raw["question"],
                          "header": _text(raw.get("header")), "options": options,
                          "multiSelect": False, "secret": raw.get("isSecret") is True})
    return {"questions": questions}


def codex_answers(tool_input: dict[str, Any], updated_input: dict[str, Any] | None) -> dict[str, Any]:
    """Codex's ``ToolRequestUserInputResponse`` for the person's answers (none
    when they declined: Codex then reads every question as unanswered)."""
    given = (updated_input or {}).get("answers")
    given = given if isinstance(given, dict) else {}
    answers: dict[str, Any] = {}
    for question in tool_input.get("questions", []):
        answer = given.get(question["question"])
        if isinstance(answer, str) and answer:
            answers[question["id"]] = {"answers": [answer]}
    return {"answers": answers}
