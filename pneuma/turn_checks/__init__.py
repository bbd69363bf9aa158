"""Checks after every turn (issue 28, item 5; docs/checks.md): the mode's
``register_turn_checks`` run on the files a turn changed, the turn's badge
in the chat, the workspace's "repair" setting and the one automatic repair
turn. A host feature on the session's hooks (pneuma.turn_checks.plugin)."""
