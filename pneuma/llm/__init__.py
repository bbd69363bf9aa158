"""The host's one LLM gateway: every model call in Pneuma (the native
backend's agent loop, a mode's structured calls) goes through
``LLMGateway``, whose providers are the anthropic SDK (Messages API) and the
openai SDK (Chat Completions, for OpenAI and compatible servers); its
image side, ``ImageGateway``, calls an OpenAI-compatible images endpoint.
Plugins import these names from ``pneuma.api``."""

from pneuma.llm.gateway import GatewayError, LLMGateway, ToolCallResult
from pneuma.llm.image_settings import ImageSettings, load_image_settings
from pneuma.llm.images import GeneratedImage, ImageGateway
from pneuma.llm.pricing import cost_of
from pneuma.llm.settings import (
    DEFAULT_MODEL,
    PROVIDERS,
    InvalidLLMSettings,
    LLMSettings,
    api_credentials,
    credentials_problem,
    has_credentials,
)

__all__ = [
    "DEFAULT_MODEL",
    "GatewayError",
    "GeneratedImage",
    "ImageGateway",
    "ImageSettings",
    "InvalidLLMSettings",
    "LLMGateway",
    "LLMSettings",
    "PROVIDERS",
    "ToolCallResult",
    "api_credentials",
    "cost_of",
    "credentials_problem",
    "has_credentials",
    "load_image_settings",
]
