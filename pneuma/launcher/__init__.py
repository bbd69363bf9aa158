"""The launcher: `pneuma` with no arguments (or `pneuma open`).

A page with the installed modes and the recent workspaces, from which one
process serves several workspaces at once, each its own session (its own
agent, URL and token). docs/launcher.md.

    recent.py   the list of recent workspaces ($PNEUMA_HOME/workspaces.json)
    details.py  what the list shows about each (read from the workspace)
    hosting.py  WorkspaceHost: the sessions this process serves
    app.py      the launcher's aiohttp application (page and JSON routes)
    main.py     the process: bind, ready line, serve, stop everything
"""
