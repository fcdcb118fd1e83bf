"""The page's own files, as the real server serves them: index.html loads app.js as an ES module,
every module it imports (and they import) is served with a JavaScript type and exports the names
imported from it, every file under web/static is shipped as package data, none is over the
house's ceiling of 600 lines."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from tests.web.api_support import Live

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "agenteval"
STATIC = PACKAGE / "web" / "static"

MODULE_SCRIPT = re.compile(r'<script\s+type="module"\s+src="([^"]+)"\s*>\s*</script>')
IMPORT = re.compile(r'^\s*import\s*(?:\{([^}]*)\}\s*from\s*)?"([^"]+)";', re.M)
EXPORT = re.compile(r"^export\s+(?:async\s+)?(?:function|const|let|class)\s+([\w$]+)", re.M)


def served_modules(live: Live) -> dict[str, str]:
    """Path → source of every module reachable from the page's module script, each checked as
    served (200, a JavaScript type) and each named import checked against its module's exports."""
    page = live.get("/")
    assert page.status_code == 200, page.text
    entries = MODULE_SCRIPT.findall(page.text)
    assert entries == ["/static/app.js"], "the page loads app.js, as a module, and nothing else"
    assert "<script src=" not in page.text  # no classic script beside it
    sources: dict[str, str] = {}
    wanted: list[tuple[str, str, str]] = []  # (importer, module, name)
    todo = list(entries)
    while todo:
        path = todo.pop()
        if path in sources:
            continue
        r = live.get(path)
        assert r.status_code == 200, (path, r.status_code)
        assert r.headers["content-type"].split(";")[0].strip() == "text/javascript", (path, r.headers)
        assert r.headers["x-content-type-options"] == "nosniff"  # so the type above is what counts
        assert r.headers["cache-control"] == "no-cache", path  # never modules of two versions
        sources[path] = r.text
        for names, spec in IMPORT.findall(r.text):
            assert spec.startswith((".", "/")) and spec.endswith(".js"), (path, spec)  # no bare names
            target = urlsplit(urljoin(live.url + path, spec)).path
            assert target.startswith("/static/"), (path, spec)
            wanted += [(path, target, n.strip()) for n in names.split(",") if n.strip()]
            todo.append(target)
    for importer, module, name in wanted:
        exports = EXPORT.findall(sources[module])
        assert name in exports, f"{importer} imports {name} from {module}, which does not export it"
    return sources


def test_every_module_is_served_as_javascript_and_exports_what_is_imported(live: Live) -> None:
    sources = served_modules(live)
    # every module is reachable from the page, none is missing; types/ holds the API's typedefs,
    # read by the modules' annotations (and tests/web/test_contract.py), never loaded
    on_disk = {"/static/" + p.relative_to(STATIC).as_posix() for p in STATIC.rglob("*.js")
               if p.parent.name != "types"}
    assert set(sources) == on_disk
    assert len(sources) > 10  # the page is split into modules (app.js is the router only)


def test_a_file_that_is_not_there_is_a_404_and_css_keeps_its_type(live: Live) -> None:
    assert live.get("/static/views/nothing.js").status_code == 404
    css = live.get("/static/app.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")


def test_every_page_file_is_package_data() -> None:
    """A fresh `pip install .` ships what the page loads: pyproject's package-data patterns
    match every file under web/static, subfolders included."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["agenteval"]
    shipped = {p for pattern in patterns for p in PACKAGE.glob(pattern) if p.is_file()}
    files = {p for p in STATIC.rglob("*") if p.is_file()}
    assert files and files <= shipped, sorted(str(p.relative_to(PACKAGE)) for p in files - shipped)


def test_no_page_file_is_over_600_lines() -> None:
    sizes = {p.relative_to(STATIC).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
             for p in STATIC.rglob("*") if p.suffix in (".js", ".css", ".html")}
    assert sizes and max(sizes.values()) <= 600, sizes
