"""Agents (`/api/apps`, ADK's `/list-apps`) and the criteria a run may use (`/api/criteria`)."""

from __future__ import annotations

import inspect
import re

from fastapi import APIRouter

from agenteval.criteria import default_registry
from agenteval.schema import LlmAsAJudgeCriterion
from agenteval.schema.base import utf8_text
from agenteval.schema.config import DEFAULT_CRITERIA
from agenteval.web.context import ContractRoute, WebDep
from agenteval.web.contract import AppInfo, CriterionInfo

router = APIRouter(tags=["agents"], route_class=ContractRoute)


@router.get("/api/apps")
def list_agents(web: WebDep) -> list[AppInfo]:
    """Every agent folder, imported: its kind, or the error that stopped its import."""
    out = []
    for name in web.agents.names():
        loaded = web.agents.load(name)
        if loaded is not None:
            out.append(AppInfo(name=name, kind=loaded.kind, error=loaded.error))
    return out


@router.get("/list-apps")
def list_app_names(web: WebDep) -> list[str]:
    """ADK's dev-server route: the agent names."""
    return web.agents.names()


@router.get("/api/criteria", tags=["eval sets"])
def list_criteria() -> list[CriterionInfo]:
    """Every registered criterion: whether a judge scores it, its score range, its default
    threshold (agenteval's default config's, else None), and whether it is informational."""
    out = []
    for name in default_registry().names():
        spec = default_registry().specs[name]
        default = DEFAULT_CRITERIA.get(name)
        if isinstance(default, dict):
            default = default.get("threshold")
        out.append(CriterionInfo(name=name, description=_description(name, spec.factory, spec.description),
                                 judged=issubclass(spec.criterion_model, LlmAsAJudgeCriterion),
                                 min_value=spec.min_value, max_value=spec.max_value,
                                 default_threshold=default, informational=spec.informational))
    return out



def _description(name: str, factory: object, fallback: str) -> str:
    """What a criterion measures, whole and as plain text: its docstring's first paragraph
    (the registry keeps only its first line, cut mid-sentence), without the leading
    "`name`:" the docstrings open with and without Markdown backticks. A plugin's docstring may
    hold a lone surrogate, which no JSON reply can: U+FFFD in its place (`utf8_text`)."""
    doc = inspect.getdoc(factory) if inspect.isclass(factory) else None
    doc = utf8_text(doc)[0] if doc else doc
    text = " ".join((doc or fallback).split("\n\n")[0].split()) if doc else " ".join(fallback.split())
    text = re.sub(rf"^`{re.escape(name)}`\s*[:;,]?\s*", "", text).replace("`", "")
    return text[:1].upper() + text[1:]
