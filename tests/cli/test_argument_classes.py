"""The commands' argument holders compare by identity and keep object's repr.

Each is made once per command and read; each method `dataclass` generates is compiled when
the command starts (bench/README.md, session 39), so these have none but `__init__`.
"""

import pytest

from agenteval.cli.commands import Outputs, ScoreArgs
from agenteval.cli.run import EvalArgs


@pytest.mark.parametrize("cls", [EvalArgs, ScoreArgs, Outputs], ids=lambda c: c.__qualname__)
def test_an_argument_holder_compares_by_identity_with_objects_repr(cls: type) -> None:
    assert cls.__eq__ is object.__eq__ and cls.__hash__ is object.__hash__
    assert cls.__repr__ is object.__repr__
