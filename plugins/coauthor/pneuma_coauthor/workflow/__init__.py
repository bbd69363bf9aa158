"""Use cases and the default agent workflow (docs/design/coauthor.md, "Workflow")."""

from pneuma_coauthor.workflow.usecases import ApplyResult, CoAuthor, UseCaseError

__all__ = ["ApplyResult", "CoAuthor", "UseCaseError"]
