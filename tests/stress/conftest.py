"""The stress suite (issue 14, items 1-5; issue 23's fault injection;
issue 24's seams): bounded, loopback-only runs of the hardening tests with
larger counts, selected by ``-m stress``. What each tried is printed at
the end of the run by tests/stress/summary.py (loaded by the root
conftest.py)."""
