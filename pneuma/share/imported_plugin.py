"""An imported conversation's summary handed to the agent, as a host plugin
attached to each session being served (docs/hooks.md,
"register_session_features"; docs/sharing.md, "Open a shared file").

Imported whenever the plugin manager is built, so it imports nothing heavy
until a server is actually built."""

from __future__ import annotations

from typing import Any

from pneuma import hookimpl

FEATURE = "shared-history"


class SharedHistory:
    """The person's first message in a conversation opened from a shared
    file carries what was said there, once, to an agent that starts afresh."""

    def __init__(self, session: Any) -> None:
        self._session = session

    async def before_turn(self, turn: Any) -> None:
        from pneuma.share.imported import take_pending_summary

        session = self._session
        if session.conversation is None or session.agent_session_id is not None:
            return
        current = session.conversation_id
        summary = session.conversation.run(lambda db: take_pending_summary(db, current))
        if summary:
            turn.prefixes.append(f"<shared-conversation>{summary}</shared-conversation>")


@hookimpl
def register_session_features(pneuma: Any) -> list[Any]:
    pneuma.session.hooks.add(FEATURE, SharedHistory(pneuma.session))
    return []
