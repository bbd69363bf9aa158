"""Per-turn checkpoints of a workspace's watched files, and rewinding to them.

Before each user turn reaches the agent ``turn_listener.CheckpointTurns``,
subscribed to the session's hooks, calls ``Checkpoints.record(message)``;
when the turn ends, ``turn_ended()``.
docs/checkpoints.md describes what is kept, where, and for how long.
"""

from pneuma.checkpoints.compare import Changes, unified_diff
from pneuma.checkpoints.model import Checkpoint, FileEntry, FileMap
from pneuma.checkpoints.policy import StorePolicy
from pneuma.checkpoints.restore import RestorePlan, RestoreResult, plan_restore, restore
from pneuma.checkpoints.store import STORE_DIR, Checkpoints

__all__ = ["Changes", "Checkpoint", "Checkpoints", "FileEntry", "FileMap", "RestorePlan",
           "RestoreResult", "STORE_DIR", "StorePolicy", "plan_restore", "restore",
           "unified_diff"]
