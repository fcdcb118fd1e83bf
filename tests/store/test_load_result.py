"""`load_result`: what is not a result document is named for what it is."""

import json
from pathlib import Path

import pytest

from agenteval.errors import DataError
from agenteval.store import load_result


def test_an_eval_set_given_for_a_result_says_so(tmp_path: Path) -> None:
    path = tmp_path / "s.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "s", "eval_cases": []}))
    with pytest.raises(DataError) as err:
        load_result(path)
    assert str(err.value) == f"{path}: is an eval set, not a result document (what eval and score " \
        "write with --output, or a run id)"


def test_a_result_missing_a_key_names_the_key(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"eval_set_id": "s", "eval_case_results": []}))
    with pytest.raises(DataError, match="eval_set_result_id: field required"):
        load_result(path)
