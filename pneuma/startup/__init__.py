"""Starting and serving a workspace, shared by the two front ends (the
``pneuma`` command line and the launcher): the workspace lock, the start
checks, the launch stamp, the server's run loop and the list of recent
workspaces. Neither front end imports the other's modules for this."""
