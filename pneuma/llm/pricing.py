"""What a model call cost, from its token usage."""

from __future__ import annotations

from collections.abc import Mapping

# USD per million tokens (input, output), by model-name prefix; first match wins.
PRICES: list[tuple[str, float, float]] = [
    ("claude-opus-4-5", 5.0, 25.0),
    ("claude-opus", 15.0, 75.0),
    ("claude-3-opus", 15.0, 75.0),
    ("claude-haiku-4", 1.0, 5.0),
    ("claude-3-5-haiku", 0.8, 4.0),
    ("claude-3-haiku", 0.25, 1.25),
    ("claude-sonnet", 3.0, 15.0),
    ("claude-3", 3.0, 15.0),
]
DEFAULT_PRICE = (3.0, 15.0)


def cost_of(model: str, usage: Mapping[str, int]) -> float:
    """USD for ``usage`` (the Messages API's usage object) on ``model``; cache
    writes cost 1.25x and cache reads 0.1x an input token."""
    price_in, price_out = next(((i, o) for p, i, o in PRICES if model.startswith(p)), DEFAULT_PRICE)
    tokens_in = (usage.get("input_tokens") or 0) + (usage.get("cache_creation_input_tokens") or 0) * 1.25
    tokens_in += (usage.get("cache_read_input_tokens") or 0) * 0.1
    return round((tokens_in * price_in + (usage.get("output_tokens") or 0) * price_out) / 1e6, 6)


# The openai provider: USD per million tokens (input, output) of OpenAI's own
# models, by name prefix, first match wins. Any other model (DeepSeek, Kimi,
# Qwen, a local server) has no price here and costs 0.0: Pneuma does not guess.
OPENAI_PRICES: list[tuple[str, float, float]] = [
    ("gpt-4.1-nano", 0.1, 0.4),
    ("gpt-4.1-mini", 0.4, 1.6),
    ("gpt-4.1", 2.0, 8.0),
    ("gpt-4o-mini", 0.15, 0.6),
    ("gpt-4o", 2.5, 10.0),
]


def openai_cost_of(model: str, usage: Mapping[str, int]) -> float:
    """USD for a Chat Completions call's usage; cached prompt tokens are
    counted as input tokens (an upper bound). 0.0 for a model of unknown price."""
    price = next(((i, o) for p, i, o in OPENAI_PRICES if model.startswith(p)), None)
    if price is None:
        return 0.0
    tokens_in, tokens_out = usage.get("input_tokens") or 0, usage.get("output_tokens") or 0
    return round((tokens_in * price[0] + tokens_out * price[1]) / 1e6, 6)
