"""Edit in place: the person changes a workspace file's text where the
viewer shows it (docs/viewer-contract.md, "Edit in place").

``POST /api/edits`` writes through the one sandbox only if the file still
is what the edit started from (else ``E_CONFLICT`` with both versions, the
person's kept under ``.pneuma/edits/conflicts/``); the files edited by hand
since the agent's last turn are named before the person's next message.
The feature attaches itself as a plugin (``plugin.py``); the server does not
name it.
"""
