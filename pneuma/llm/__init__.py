"""The host's one LLM gateway: every model call in Pneuma (the native
backend's agent loop, a mode's structured calls) goes through
``LLMGateway`` on the anthropic SDK. Plugins import these names from
``pneuma.api``."""

from pneuma.llm.gateway import GatewayError, LLMGateway, ToolCallResult
from pneuma.llm.pricing import cost_of
from pneuma.llm.settings import DEFAULT_MODEL, LLMSettings, api_credentials, has_credentials

__all__ = [
    "DEFAULT_MODEL",
    "GatewayError",
    "LLMGateway",
    "LLMSettings",
    "ToolCallResult",
    "api_credentials",
    "cost_of",
    "has_credentials",
]
