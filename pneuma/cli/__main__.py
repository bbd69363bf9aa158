"""`python -m pneuma.cli` is `pneuma` (as before the CLI became a package)."""

from pneuma.cli import main

main()
