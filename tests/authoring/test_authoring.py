"""Writing cases with the agent or a model: what is kept of generated scenarios."""

from agenteval.authoring import near_duplicate


def test_near_duplicates() -> None:
    assert near_duplicate("Where is my order 12?", "where is my order 12")
    assert not near_duplicate("Where is my order 12?", "Cancel order 9 please")
