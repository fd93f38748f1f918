"""A tool that sleeps for as long as the model asks: for tests of cancellation and of
wall-time limits (imported by the test modules; pytest puts tests/ on the path)."""

import asyncio

from pydantic import BaseModel

from harness.tools.base import Tool


class SlowParams(BaseModel):
    seconds: float


class Slow(Tool):
    name = "slow"
    description = "sleeps"
    Params = SlowParams

    async def run(self, params, ctx):
        await asyncio.sleep(params.seconds)
        return "slept"
