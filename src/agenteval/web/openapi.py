"""The API's OpenAPI schema by field names, and the page's JSDoc types generated from it.

FastAPI lists models by their aliases, and the schema package's models alias every field in
camelCase (which they accept on input); the API writes field names (`ContractRoute`), so
`contract_openapi` renames the listed properties back to the names the responses carry.

`jsdoc_typedefs` turns the schema's components into `@typedef`s: `static/types/*.js`, which the
page's modules name in their `@type` and `@param` annotations. It is generated, never edited:
`tests/web/test_contract.py` fails when it differs from what the schema gives, and rewrites it
when run with `AGENTEVAL_WRITE_TYPES=1`.
"""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, APIRouter
from pydantic import BaseModel

TYPES = Path(__file__).parent / "static" / "types"
_SUFFIX = re.compile(r"-(Input|Output)$")
MODULE = "x-module"  # the Python module of a component's model, added to each component


def _models(types: Iterable[Any], seen: dict[str, type[BaseModel]], modules: dict[str, str]) -> None:
    """Every pydantic model reachable from `types` (through fields, lists, unions, dataclasses),
    by class name."""
    todo = list(types)
    visited: set[int] = set()
    while todo:
        t = todo.pop()
        if id(t) in visited:
            continue
        visited.add(id(t))
        if isinstance(t, type) and issubclass(t, BaseModel):
            seen.setdefault(t.__name__, t)
            modules.setdefault(t.__name__, t.__module__)
            todo.extend(f.annotation for f in t.model_fields.values())
        elif isinstance(t, type) and dataclasses.is_dataclass(t):
            modules.setdefault(t.__name__, t.__module__)
            todo.extend(typing.get_type_hints(t).values())
        else:
            todo.extend(typing.get_args(t))


def _renames(model: type[BaseModel]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, field in model.model_fields.items():
        for alias in (field.alias, field.serialization_alias, field.validation_alias):
            if isinstance(alias, str) and alias != name:
                out[alias] = name
    return out


def contract_openapi(app: FastAPI, routers: Iterable[APIRouter]) -> dict[str, Any]:
    """FastAPI's schema of `app`, with the properties of every model its `routers` take or
    return under their field names."""
    if app.openapi_schema is not None:
        return app.openapi_schema
    schema = get_openapi(title=app.title, version=app.version, description=app.description,
                         routes=app.routes)
    models: dict[str, type[BaseModel]] = {}
    modules: dict[str, str] = {}
    for route in (r for router in routers for r in router.routes):
        if isinstance(route, APIRoute):
            _models([route.response_model, *(p.field_info.annotation for p in route.dependant.body_params)],
                    models, modules)
    for name, component in schema.get("components", {}).get("schemas", {}).items():
        base = _SUFFIX.sub("", name)
        component[MODULE] = modules.get(base, "fastapi")
        model = models.get(base)
        if model is None or "properties" not in component:
            continue
        renames = _renames(model)
        component["properties"] = {renames.get(k, k): v for k, v in component["properties"].items()}
        if "required" in component:
            component["required"] = [renames.get(k, k) for k in component["required"]]
    app.openapi_schema = schema
    return schema


# --- JSDoc -----------------------------------------------------------------------------------

HEADER = """/* The web API's types, generated from its OpenAPI schema (GET /openapi.json) by
 * agenteval.web.openapi: do not edit; regenerate with
 * `AGENTEVAL_WRITE_TYPES=1 python -m pytest tests/web/test_contract.py`.
 * The page's modules name them in @type and @param annotations, and tests/web/test_contract.py
 * checks that they read only the fields listed here. */
"""


def type_name(component: str) -> str:
    """A component's name as a JS identifier (`EvalSet-Output` → `EvalSet_Output`)."""
    return re.sub(r"\W", "_", component)


def js_type(schema: dict[str, Any]) -> str:
    """A JSON schema as a JSDoc type expression (`Array<RunRow>`, `string|null`, `Object<string, *>`)."""
    if "$ref" in schema:
        return type_name(schema["$ref"].rsplit("/", 1)[-1])
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            parts = [js_type(s) for s in schema[key]]
            return "|".join(dict.fromkeys(parts)) if key != "allOf" or len(parts) == 1 else "Object"
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return "|".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(js_type({**schema, "type": k}) for k in kind)
    if kind == "array":
        return f"Array<{js_type(schema.get('items', {}))}>"
    if kind == "object":
        extra = schema.get("additionalProperties")
        return f"Object<string, {js_type(extra) if isinstance(extra, dict) else '*'}>"
    return {"string": "string", "integer": "number", "number": "number", "boolean": "boolean",
            "null": "null"}.get(str(kind), "*")


def _text(text: str) -> str:
    return " ".join(text.split()).replace("*/", "*\\/")


def _typedef(name: str, schema: dict[str, Any]) -> list[str]:
    lines = ["/**"]
    if schema.get("description"):
        lines += [f" * {line}".rstrip() for line in schema["description"].replace("*/", "*\\/").splitlines()]
    properties = schema.get("properties")
    if properties is None:
        lines.append(f" * @typedef {{{js_type(schema)}}} {type_name(name)}")
    else:
        lines.append(f" * @typedef {{Object}} {type_name(name)}")
        required = set(schema.get("required", []))
        for prop, sub in properties.items():
            key = prop if prop in required else f"[{prop}]"
            doc = f" - {_text(sub['description'])}" if sub.get("description") else ""
            lines.append(f" * @property {{{js_type(sub)}}} {key}{doc}")
    lines.append(" */")
    return lines


def types_file(component: dict[str, Any]) -> str:
    """The file of `static/types/` a component's typedef is written to: `documents.js` for the
    documents the API hands back as stored (the schema package's and other packages' models),
    `web.js` for the web API's own, `insights.js` for those of looking into runs
    (`agenteval.web.contract_insights`)."""
    module = str(component.get(MODULE, ""))
    if module == "agenteval.web.contract_insights":
        return "insights.js"
    ours = module.startswith("agenteval.web") or not module.startswith("agenteval.")
    return "web.js" if ours else "documents.js"


def jsdoc_typedefs(openapi: dict[str, Any]) -> dict[str, str]:
    """Every component of the schema as a JSDoc `@typedef`, in name order, by the file of
    `static/types/` it goes to."""
    components = openapi.get("components", {}).get("schemas", {})
    files: dict[str, list[str]] = {"documents.js": [], "insights.js": [], "web.js": []}
    for name in sorted(components):
        files[types_file(components[name])] += ["", *_typedef(name, components[name])]
    return {f: "\n".join([HEADER.rstrip("\n"), *lines, "", "export {};", ""]) for f, lines in files.items()}


__all__ = ["MODULE", "TYPES", "contract_openapi", "js_type", "jsdoc_typedefs", "type_name", "types_file"]
