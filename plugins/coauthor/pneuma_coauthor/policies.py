"""Routing and scheduling (docs/design/coauthor.md, "Routing and scheduling"):
pure policy, no CLI, no LLM, no storage.

The agent host asks these two objects what to do; swapping a policy (more
agents, a TODO pool in V1) never touches the workflow or the adapters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pneuma_coauthor.domain.model import Actor, Priority, TaskView


class RoutingError(ValueError):
    pass


@dataclass(frozen=True)
class RouteDecision:
    assigned_to: str
    rule: str  # recorded in TaskRouted so the log says why


@dataclass(frozen=True)
class RouterPolicy:
    """assignedTo = the agent the person named, else the person's default agent."""

    fallback_agent: str = "coauthor"

    def route(self, task: TaskView, creator: Actor | None, actors: Mapping[str, Actor]) -> RouteDecision:
        if task.assigned_to:
            target = actors.get(task.assigned_to)
            if target is None or target.kind != "agent":
                raise RoutingError(f"no agent named {task.assigned_to!r}; agents: {', '.join(_agents(actors))}")
            return RouteDecision(task.assigned_to, "specified")
        if creator is not None and creator.default_agent_id and creator.default_agent_id in actors:
            return RouteDecision(creator.default_agent_id, "default-agent")
        if self.fallback_agent in actors:
            return RouteDecision(self.fallback_agent, "fallback-agent")
        agents = _agents(actors)
        if not agents:
            raise RoutingError("no agent is registered")
        return RouteDecision(agents[0], "first-agent")


def _agents(actors: Mapping[str, Actor]) -> list[str]:
    return sorted(a.id for a in actors.values() if a.kind == "agent")


@dataclass(frozen=True)
class SchedulerPolicy:
    """When an agent runs which task.

    - Only tasks assigned to the agent whose move it is (open, or sent back by
      feedback, a rejection or a needed rebase) are runnable.
    - Foreground before normal before background; older first within a class.
    - Writing tasks run one at a time (``writing_concurrency``): two tasks
      editing at once would compute patches against each other's base.
    - A task touching a file that has another task's patch under review waits:
      its patch could not apply after that one anyway.
    - Background tasks run only when the agent is idle (nothing running and
      nothing else runnable): the pipeline V1's TODO pool plugs into.
    """

    writing_concurrency: int = 1

    def runnable(self, view: TaskView, agent_id: str) -> bool:
        return view.assigned_to == agent_id and not view.status.final and view.waiting_on == "agent"

    def order_key(self, view: TaskView) -> tuple[int, str, str]:
        return (view.priority.rank, view.created_at, view.task_id)

    def select(self, views: Iterable[TaskView], agent_id: str, running: set[str]) -> list[str]:
        views = list(views)
        capacity = self.writing_concurrency - len(running)
        if capacity <= 0:
            return []
        under_review: dict[str, set[str]] = {}
        for view in views:
            files = {f["path"] for p in view.pending_proposals() for f in p.files}
            if files:
                under_review[view.task_id] = files
        candidates = [
            v
            for v in views
            if v.task_id not in running
            and self.runnable(v, agent_id)
            and not any(
                v.task_id != other and (v.touched_paths() & files) for other, files in under_review.items()
            )
        ]
        candidates.sort(key=self.order_key)
        busy = bool(running)
        chosen: list[str] = []
        for view in candidates:
            if len(chosen) >= capacity:
                break
            if view.priority is Priority.BACKGROUND and (busy or chosen or _has_non_background(candidates)):
                continue
            chosen.append(view.task_id)
        return chosen


def _has_non_background(views: list[TaskView]) -> bool:
    return any(v.priority is not Priority.BACKGROUND for v in views)
