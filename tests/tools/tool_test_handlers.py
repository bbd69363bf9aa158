"""Handlers of the test mode in conftest.py (``fake_mode``)."""

from __future__ import annotations

import asyncio

from pneuma.core.errors import ToolError


def echo(ctx, args):
    return {"text": args["text"]}


async def aecho(ctx, args):
    await asyncio.sleep(0)
    return {"async": True, **args}


def raise_code(ctx, args):
    raise ToolError(args["code"], f"raised {args['code']}", details={"why": "test"},
                    hint="a hint")


def crash(ctx, args):
    raise RuntimeError("boom")


def bad_output(ctx, args):
    return {"n": "not a number"}


def not_a_dict(ctx, args):
    return ["a", "list"]


def whoami(ctx, args):
    return {"workspace": str(ctx.workspace), "mode": ctx.mode.name,
            "enabled": sorted(ctx.enabled_tools), "params": ctx.params,
            "policies": {k: ctx.policies[k] for k in ("writeRequiresDiff", "snapshotRetention")}}


def echo_all(ctx, args):
    return dict(args)
