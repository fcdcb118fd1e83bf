"""A scripted google-adk model for the ADK adapter's tests (no network)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from pydantic import Field


class ScriptedLlm(BaseLlm):
    """Replies with the scripted responses in order, one per model call, after `delay` seconds."""

    model: str = "scripted-model"
    script: list[Any]
    delay: float = 0.0
    calls: int = 0
    retry_attempts: list[int | None] = Field(default_factory=list)

    async def generate_content_async(self, llm_request: LlmRequest,
                                     stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        self.calls += 1
        retry = llm_request.config.http_options and llm_request.config.http_options.retry_options
        self.retry_attempts.append(retry.attempts if retry else None)
        await asyncio.sleep(self.delay)
        item = self.script[self.calls - 1]
        if isinstance(item, Exception):
            raise item
        yield item
