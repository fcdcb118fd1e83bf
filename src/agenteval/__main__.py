"""`python -m agenteval` runs the command line."""

from agenteval.cli.main import main

main()
