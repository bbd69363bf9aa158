"""Replay: a conversation played back turn by turn in the mode's viewer
beside the chat (docs/sharing.md, "Replay"). ``turns`` reads a
conversation's turns and their checkpoints from the log, ``routes`` serves
them (``GET /api/replay``), ``plugin`` attaches them to a session; the page's
part is pneuma/web/lib/replay.js."""
