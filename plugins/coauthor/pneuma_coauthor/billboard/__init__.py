"""The shared task pool: an event store plus the projections folded from it."""

from pneuma_coauthor.billboard.billboard import Billboard, billboard_dir
from pneuma_coauthor.billboard.projections import Projector, ThreadView
from pneuma_coauthor.billboard.store import EventStore

__all__ = ["Billboard", "EventStore", "Projector", "ThreadView", "billboard_dir"]
