"""models.limits: the slots of one endpoint."""

from __future__ import annotations

import anyio

from agenteval.models.limits import SharedSlots


def test_shared_slots_take_a_limit_beyond_what_an_os_semaphore_counts() -> None:
    # `--model_parallelism M=10**23` (or --parallelism 10**23) under --isolation process: an
    # OverflowError from the OS semaphore ended the run with exit 1, as if a case had failed.
    slots = SharedSlots(10**23)
    assert slots.limit == 10**23
    anyio.run(slots.acquire)
    slots.release()
