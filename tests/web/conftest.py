"""Fixtures of the web API tests (`tests/web/api_support.py`): `agents_dir`, `live`."""

from tests.web.api_support import agents_dir, live  # noqa: F401  (fixtures)
