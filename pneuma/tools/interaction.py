"""``ask_followup_question`` and ``attempt_completion``: the agent talks to
the person through the Pneuma page.

Generic agent tools any mode can list in its manifest (handlers
``pneuma.tools.interaction:ask_followup_question`` and
``…:attempt_completion``). Inside ``pneuma run`` they go to the page through
``ctx.interact``; in an MCP or ``pneuma tool`` process started by the agent
of a ``pneuma run`` session (``PNEUMA_API`` set) they are forwarded to that
server; with no page anywhere they fail with ``E_UNSUPPORTED`` and a hint to
say it in the reply instead.

- ``ask_followup_question {question}`` → ``{ack: true, answer?}`` (``answer``:
  the person's reply typed in the page).
- ``attempt_completion {result}`` → ``{ack: true}`` once the page shows it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pneuma.core.errors import ToolError
from pneuma.tools.context import ToolContext
from pneuma.tools.runtime import forward_to_server


async def ask_followup_question(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    question = args["question"]
    if ctx.interact is not None:
        answer = await ctx.interact.ask(question, None)
        result: dict[str, Any] = {"ack": True}
        if isinstance(answer, str):
            result["answer"] = answer
        return result
    if ctx.server_url:
        return await asyncio.to_thread(forward_to_server, ctx, "ask_followup_question", args)
    raise ToolError("E_UNSUPPORTED", "no browser page is connected to ask the person",
                    details={"question": question},
                    hint="Ask the question in your reply and wait for the person's answer.")


async def attempt_completion(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    summary = args["result"]
    if ctx.interact is not None:
        await ctx.interact.complete(summary)
        return {"ack": True}
    if ctx.server_url:
        return await asyncio.to_thread(forward_to_server, ctx, "attempt_completion", args)
    raise ToolError("E_UNSUPPORTED", "no browser page is connected to show the result",
                    details={"result": summary},
                    hint="Give the summary in your reply instead.")
