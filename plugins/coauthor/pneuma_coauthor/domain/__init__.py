"""CoAuthor's domain: actors, artifacts, tasks and the events that change them.

Pure Python with no I/O, so the rules (which event moves a task where, what a
valid patch is) can be tested and replayed without a workspace or a database.
"""

from pneuma_coauthor.domain.events import EVENT_TYPES, TaskEvent, new_event
from pneuma_coauthor.domain.model import (
    Actor,
    Artifact,
    ArtifactRef,
    LineRange,
    Priority,
    TaskStatus,
    TaskView,
    artifact_type_for,
    revision_of,
)
from pneuma_coauthor.domain.state import (
    InvalidTransition,
    apply_event,
    check_transition,
)

__all__ = [
    "EVENT_TYPES",
    "Actor",
    "Artifact",
    "ArtifactRef",
    "InvalidTransition",
    "LineRange",
    "Priority",
    "TaskEvent",
    "TaskStatus",
    "TaskView",
    "apply_event",
    "artifact_type_for",
    "check_transition",
    "new_event",
    "revision_of",
]
