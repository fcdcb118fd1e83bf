"""Executors: where a run's (case, run) units are inferred and scored.

`LocalExecutor` runs them in this process's event loop; `RayExecutor`
(`runner.executors.ray_executor`, needs `pip install 'agenteval[ray]'`) spreads them over a Ray
cluster. Ray is imported only when that executor is used.
"""

from agenteval.runner.executors.base import Done, Executor, Unit
from agenteval.runner.executors.local import LocalExecutor, run_unit

__all__ = ["Done", "Executor", "LocalExecutor", "Unit", "run_unit"]
