"""agenteval: evaluate AI agents' final responses and tool trajectories.

The package is organised by nouns: `schema` (data), `datasets` (files), `criteria`, `models`,
`agents`, `runner`, `reporting`, and thin front ends (`cli`). Import from those packages;
this top level stays small so that `agenteval --help` starts fast.
"""

from typing import Any

__version__ = "0.1.0"
__all__ = ["AgentEvaluator", "EvaluationFailed", "__version__"]


def __getattr__(name: str) -> Any:
    # Lazy, so that `import agenteval` (and the CLI's start-up) stays light.
    if name in ("AgentEvaluator", "EvaluationFailed"):
        from agenteval import evaluator

        return getattr(evaluator, name)
    raise AttributeError(f"module 'agenteval' has no attribute {name!r}")
