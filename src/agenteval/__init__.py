"""agenteval: evaluate AI agents' final responses and tool trajectories.

The package is organised by nouns: `schema` (data), `datasets` (files), `criteria`, `models`,
`agents`, `runner`, `reporting`, and thin front ends (`cli`). Import from those packages;
this top level stays small so that `agenteval --help` starts fast.
"""

__version__ = "0.1.0"
