"""Claude Code's tools that ask the person rather than act: ``AskUserQuestion``
and ``ExitPlanMode`` (docs/backends.md, "Questions and plans").

The pinned CLI asks for both through ``can_use_tool`` (its request carries
``requires_user_interaction: true``), and only when it runs with
``--permission-prompt-tool stdio``: without it, AskUserQuestion is not
offered to the model at all. The person's answer is the permission answer:

- AskUserQuestion: allow, with ``updatedInput`` = the tool's input plus
  ``answers`` {question text: chosen label(s), comma-joined}; the CLI turns
  that into the tool_result the model reads. Deny: the model reads the note.
- ExitPlanMode: allow leaves plan mode and the agent goes on; deny keeps it
  planning, and the note is the tool_result it reads.

Even in ``bypassPermissions`` (where the bridge answers every other
``can_use_tool`` itself) these go to the person: nobody else can answer them.
"""

from __future__ import annotations

from typing import Any

ASK_THE_PERSON = frozenset({"AskUserQuestion", "ExitPlanMode"})


def asks_the_person(request: dict[str, Any]) -> bool:
    """Whether a ``can_use_tool`` request is a question only the person can
    answer (so no permission mode may answer it in their place)."""
    return request.get("tool_name") in ASK_THE_PERSON or request.get("requires_user_interaction") is True
