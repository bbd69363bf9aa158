"""Compact JSON text for what goes over the socket and into the log.

Its own module, free of aiohttp, so that the early server's imports
(pneuma.server.persistence and what it reads) can use it too
(tests/test_serve_first.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def _make_dumps() -> Callable[[Any], str]:
    """Compact JSON text, non-ASCII as is: ``json.JSONEncoder(...).encode``
    without the encoder object it builds on every call (a third of the cost
    of a small message). Same output; a circular structure, which no
    message can be, raises RecursionError instead of ValueError."""
    encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator
        return encoder.encode
    c_encode = make(None, encoder.default, json.encoder.encode_basestring, None, ":", ",",
                    False, False, True)

    def dumps(obj: Any) -> str:
        return "".join(c_encode(obj, 0))

    return dumps


dumps = _make_dumps()
