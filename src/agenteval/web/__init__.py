"""`agenteval web`: a JSON API over the runner, store, datasets and reporting, and the static
page that uses it (`create_app`). Needs the `web` extra (FastAPI, uvicorn)."""

from agenteval.web.app import create_app

__all__ = ["create_app"]
