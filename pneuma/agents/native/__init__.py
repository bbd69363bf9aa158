"""Pneuma's own agent runtime (``pneuma run --backend native``).

Pneuma drives the model itself through the Anthropic Messages API. The
model's tools are the mode's tools, the viewer's agent-invocable actions and
the browser actions that connected browser clients carry out. See
docs/native.md for the whole picture. Like a third-party backend it
imports only ``pneuma.api`` of the host, and its model calls go through the
host's LLM gateway (``pneuma.api.LLMGateway``). The modules are small on
purpose:

* ``plugin``: ``register_backends``, the backend's ``BackendSpec``;
* ``config``: ``NativeConfig``, the runtime's limits and its ``LLMSettings``;
* ``state``: the task state machine;
* ``store``: ``SessionStore`` (SQLite) so a restart continues;
* ``clients``: ``ExtensionRegistry`` and ``TwinStore``;
* ``scheduler``: ``ActionScheduler``, one browser action at a time per session;
* ``artifacts``: ``ArtifactService``, screenshots/HTML/text by reference;
* ``prompt`` and ``tools``: what the model is told and what it may call;
* ``orchestrator``: the loop tying it together;
* ``backend``: ``NativeBackend``, the ``AgentBackend`` the session talks to;
* ``routes``: HTTP routes and the browser clients' WebSocket;
* ``browser_client``: ``pneuma browser-client``, a headless Chromium client.
"""
