"""`python -m agenteval` runs the command line."""

from agenteval.cli.entry import main

raise SystemExit(main())
