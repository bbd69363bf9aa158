"""Use cases and the default agent workflow (§7)."""

from pneuma_coauthor.workflow.usecases import ApplyResult, CoAuthor, UseCaseError

__all__ = ["ApplyResult", "CoAuthor", "UseCaseError"]
