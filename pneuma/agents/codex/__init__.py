"""The Codex CLI (``@openai/codex``) as an agent backend, driven over
``codex app-server`` JSON-RPC on stdio. Registers itself through
``register_backends`` (``plugin.py``) and imports only ``pneuma.api``."""
