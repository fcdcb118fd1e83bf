"""User simulation for `conversation_scenario` cases."""

from agenteval.schema.personas import PERSONAS
from agenteval.simulation.config import LlmBackedUserSimulatorConfig, parse_simulator_config
from agenteval.simulation.personas import persona
from agenteval.simulation.simulator import LlmUserSimulator, NextTurn

__all__ = [
    "PERSONAS",
    "LlmBackedUserSimulatorConfig",
    "LlmUserSimulator",
    "NextTurn",
    "parse_simulator_config",
    "persona",
]
