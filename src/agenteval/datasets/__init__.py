"""Reading and writing eval sets, configs and sessions, with errors that name file and key."""

from agenteval.datasets.config import default_config_for, load_eval_config
from agenteval.datasets.files import read_json, write_as_read, write_model, write_text_atomic
from agenteval.datasets.loader import (
    check_unique_ids,
    load_eval_set,
    load_session_file,
    migrate,
    parse_eval_set,
    validate_eval_set_json,
)

__all__ = [
    "check_unique_ids",
    "default_config_for",
    "load_eval_config",
    "load_eval_set",
    "load_session_file",
    "migrate",
    "parse_eval_set",
    "read_json",
    "validate_eval_set_json",
    "write_as_read",
    "write_model",
    "write_text_atomic",
]
