"""The rebuild's fast path: rows read as RawEvents (no pydantic) must fold and
read exactly like the validated events they were appended as."""

from __future__ import annotations

from pathlib import Path

from pneuma_coauthor.billboard import Billboard
from pneuma_coauthor.workflow.usecases import CoAuthor

from .test_billboard import scripted_history


def test_raw_events_are_the_validated_events(paper: Path):
    app = CoAuthor(paper)
    scripted_history(app)
    validated = app.billboard.events()
    raw = list(app.billboard.store.read_raw(0, batch=7))  # batches that split the log
    assert [r.to_event() for r in raw] == validated
    for r, e in zip(raw, validated):
        # Every field reads as the validated payload's JSON form, the ones
        # the stored dump left out (None) included.
        as_json = e.payload.model_dump(by_alias=True, mode="json")
        for name, field in type(e.payload).model_fields.items():
            assert getattr(r.payload, name) == as_json[field.alias], (e.type, name)


def test_a_reopened_billboard_has_the_same_threads_and_files(paper: Path):
    app = CoAuthor(paper)
    scripted_history(app)
    other = Billboard.open(paper)  # folds the log through the raw path
    for view in app.billboard.query_tasks():
        live, reopened = app.billboard.get_thread(view.task_id), other.get_thread(view.task_id)
        assert [e.model_dump() for e in reopened.events] == [e.model_dump() for e in live.events]
    assert {p: a.dump() for p, a in other.projector.artifacts.items()} == {
        p: a.dump() for p, a in app.billboard.projector.artifacts.items()
    }
