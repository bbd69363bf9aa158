"""Handlers of the WebGAL mode's tools (named in manifest.json).

The generic file tools come from the host's tool runtime.
"""

from pneuma.tools.builtin_files import (  # noqa: F401
    list_files,
    list_snapshots,
    read_file,
    replace_in_file,
    restore_snapshot,
    search_files,
    write_to_file,
)
