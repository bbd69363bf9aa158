"""Which files a recording reads again, whatever their stat says
(pneuma.checkpoints.baseline.racy): those read within the file system's
timestamp tick after their last write, a tenth of a second where
timestamps are finer than a second, two seconds where they are whole."""

from __future__ import annotations

from pneuma.checkpoints.scan import racy

SECOND = 1_000_000_000


def test_fine_timestamps_are_doubted_for_a_tenth_of_a_second() -> None:
    written = 1_700_000_000 * SECOND + 123_456_789
    assert racy(written, written + 50_000_000)
    assert not racy(written, written + 150_000_000)


def test_whole_second_timestamps_are_doubted_for_two_seconds() -> None:
    written = 1_700_000_000 * SECOND
    assert racy(written, written + SECOND)
    assert not racy(written, written + 3 * SECOND)
