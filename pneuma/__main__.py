"""``python -m pneuma``: the same as the ``pneuma`` command."""

from pneuma.cli import main

main()
