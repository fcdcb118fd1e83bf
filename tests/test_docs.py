"""The commands README.md and docs/ show run as written: every `agenteval CMD ...` they show names a
real command, and every option given to it is one that command accepts."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import click
import pytest

from agenteval.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9_-]*")


@functools.cache
def _commands() -> dict[str, click.Command]:
    """Every command and sub-command by its words (`runs flaky`)."""
    ctx = click.Context(cli)
    found: dict[str, click.Command] = {}

    def walk(group: click.Group, words: list[str]) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            assert command is not None
            found[" ".join([*words, name])] = command
            if isinstance(command, click.Group):
                walk(command, [*words, name])

    walk(cli, [])
    return found


def _shown() -> list[tuple[str, int, str]]:
    """(file, line, command line) of each `agenteval ...` in backticks or on a code block's line."""
    shown = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        blocks = [m.span() for m in re.finditer(r"^```.*?^```", text, re.M | re.S)]
        for m in re.finditer(r"`(agenteval [a-z_][^`\n]*)`|^(agenteval [a-z_].*)$", text, re.M):
            if m.group(2) and not any(a < m.start() < b for a, b in blocks):
                continue  # a line of prose that begins with the word
            shown.append((path.name, text.count("\n", 0, m.start()) + 1, m.group(1) or m.group(2)))
    return shown


def test_the_docs_show_commands() -> None:
    assert len(_shown()) > 40  # the scan reads the docs at all


@pytest.mark.parametrize(("doc", "line", "shown"), _shown())
def test_a_shown_command_exists_and_takes_its_options(doc: str, line: int, shown: str) -> None:
    commands = _commands()
    words = shown.split()[1:]
    name = next((" ".join(words[:n]) for n in (2, 1) if " ".join(words[:n]) in commands), None)
    assert name is not None, f"{doc}:{line}: no command `agenteval {words[0]}`"
    params = commands[name].params
    accepted = {o for p in params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
    # A comment after `#` on a code block's line is prose, not the command's.
    refused = [o for o in OPTION.findall(shown.split("  #")[0]) if o not in accepted]
    assert not refused, f"{doc}:{line}: `agenteval {name}` does not take {refused}"


def test_every_web_route_and_run_field_is_in_the_api_doc() -> None:
    pytest.importorskip("fastapi")
    from agenteval.web.routes import apps, eval_sets, insights, launch, results, runs, sessions

    def shape(path: str) -> str:
        return re.sub(r"\{[^}]*\}", "{}", path.split("?")[0])

    doc = (ROOT / "docs" / "web-api.md").read_text(encoding="utf-8")
    documented = {(m[1], shape(m[2])) for m in re.finditer(r"\b(GET|POST|PUT|DELETE)\s+`?(/[^\s`),]*)", doc)}
    # "- `GET /route` ...; `PUT` body ...; `DELETE ?q=`": a method named without a path, in the
    # same item, goes with the item's route.
    for item in re.split(r"\n- ", doc):
        if first := re.match(r"`(?:GET|POST|PUT|DELETE) (/[^\s`),]*)", item):
            documented |= {(m, shape(first[1])) for m in re.findall(r"`(GET|POST|PUT|DELETE)[` ][^/]", item)}
    served = {(method, shape(route.path))
              for router in (apps.router, sessions.router, eval_sets.router, launch.router, runs.router,
                             results.router, insights.router, runs.by_id)
              for route in router.routes for method in getattr(route, "methods", None) or ()}
    assert not served - documented, f"routes docs/web-api.md does not name: {sorted(served - documented)}"
    run = doc[doc.index("/eval-sets/{set_id}/run` body"):]
    run = run[:run.index("\n- ")]
    assert not [f for f in launch.RunBody.model_fields if f'"{f}"' not in run], "run body fields not named"
