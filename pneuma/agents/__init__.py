"""Agent backends: the Claude Code CLI, Pneuma's own runtime, or none."""
