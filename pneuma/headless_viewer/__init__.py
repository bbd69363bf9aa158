"""The headless viewer: when the agent asks for a viewer action and no tab of
the person's is open, the server answers from a page of its own, the same
shell in a Chromium it starts on demand (docs/viewer-contract.md,
"Headless viewer"; docs/security.md, "The headless viewer")."""
