"""The hello_world example agent (`root_agent` lives in agent.py)."""

from . import agent as agent
