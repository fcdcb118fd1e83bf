"""The marks of a test that runs the embedded model: `model`, anyio, and skipped (saying why)
when `agenteval[local]` or the model file is missing."""

from __future__ import annotations

import pytest

from agenteval.models import ModelUnavailable, check_local_available


def _unavailable() -> str | None:
    try:
        check_local_available()
    except ModelUnavailable as exc:
        return str(exc)
    return None


REASON = _unavailable()
EMBEDDED_MODEL = [
    pytest.mark.model,
    pytest.mark.anyio,
    pytest.mark.skipif(REASON is not None, reason=f"embedded model not installed: {REASON}"),
]
