"""Review pins: the person pins several places of the artifact, each with a
comment, and sends them as one review (docs/viewer-contract.md, "Annotate").

The pins are the workspace's, kept in ``.pneuma/review-pins.json``
(``store.py``) and served on ``GET``/``PUT /api/review/pins`` (``routes.py``);
every change is broadcast as ``review_pins`` so that every tab shows the same
pins. The shell's side is ``pneuma/web/lib/pins.js``. The feature attaches
itself as a host plugin (``plugin.py``); the server does not name it.
"""
