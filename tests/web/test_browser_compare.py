"""The compare page in a real browser on a run of many cases: the counts and the paired
statistics are of every case, with what `agenteval compare` notes (criteria that differ, why
cases are INCONCLUSIVE), the cases come a page at a time ("Show 100 more"), filtered by the
server (changed / regressed / improved / unchanged / every case)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenteval.schema.run import RunSpec
from agenteval.store import record_run
from tests.result_builders import case, result
from tests.web.browser_support import serve, shot
from tests.web.test_browser import app_factory, browser, executable, page, shots  # noqa: F401 (fixtures)

# 250 cases: c0-c119 regress, c120-c129 improve, the rest unchanged.
_BASE = {f"c{i}": 0.9 if i < 120 else 0.4 if i < 130 else 1.0 for i in range(250)}
_CAND = {f"c{i}": 0.7 if i < 120 else 0.95 if i < 130 else 1.0 for i in range(250)}


@pytest.fixture(scope="module")
def base_url(executable: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:  # noqa: F811
    root = tmp_path_factory.mktemp("agents")
    folder = root / "many"
    folder.mkdir()
    (folder / "agent.py").write_text("def root_agent(text):\n    return 'ok'\n", encoding="utf-8")
    for run_id, scores, created, bar in (("base_r1", _BASE, 1.0, 0.8), ("cand_r1", _CAND, 2.0, 0.5)):
        doc = result([case(i, {"m": s}) for i, s in scores.items()], run_id, "many",
                     created=1_700_000_000.0 + created)
        doc.run = RunSpec(run_id=run_id, command="eval", config={"criteria": {"m": bar}})  # (B's bar lowered)
        record_run(folder, [doc])
    with serve(app_factory(root)) as url:
        yield url


def test_the_compare_page_pages_its_cases_and_the_server_filters_them(page: Any, base_url: str,  # noqa: F811
                                                                       shots: Path) -> None:  # noqa: F811
    page.goto(base_url + "/#/compare/base_r1/cand_r1")
    page.wait_for_selector(".compare .counts")
    counts = page.inner_text(".compare .counts")
    assert "120 regressed" in counts and "10 newly passed" in counts and "120 unchanged" in counts
    assert page.inner_text(".compare .paired .decision").startswith("NO REGRESSION; significant improvement")
    # what `agenteval compare` says besides its tables: the bar moved, and why 10 cases are undecided
    assert page.inner_text(".compare .paired .criteria-differ") == ("The runs' criteria differ, so their "
                                                                      "passes are judged against different "
                                                                      "bars: m: threshold 0.8 → 0.5.")
    why = page.inner_text(".compare .paired .inconclusive")
    assert why.startswith("10 INCONCLUSIVE: their pass rates differ") and "--num_runs 4" in why
    rows = page.locator("table.cmp:not(.measures) tbody tr")
    assert rows.count() == 100  # the first page of the 130 changed cases
    assert page.inner_text(".compare .listed") == "100 of 130 changed cases listed"
    assert rows.first.get_attribute("data-case") == "c0"
    assert "c0" in rows.first.inner_text() and "regressed" in rows.first.inner_text()
    # (each row's change from its own runs, asked for the page's cases alone)
    assert rows.nth(99).locator("td:nth-child(5) .badge").inner_text() == "UNCHANGED"  # (both passed)
    page.click("#cmp-more")
    page.wait_for_selector('table.cmp tbody tr[data-case="c129"]')
    assert rows.count() == 130 and page.is_hidden("#cmp-more")
    assert page.inner_text(".compare .listed") == "130 of 130 changed cases listed"
    assert rows.nth(125).locator("td:nth-child(5) .badge").inner_text() == "INCONCLUSIVE"  # (one run a side)
    shot(page, shots, "compare-paged")
    # the server filters: improved only, then unchanged (whose criteria are listed unchanged)
    page.select_option("#cmp-show", "improved")
    page.wait_for_selector(".compare .listed >> text=10 of 10 improved cases listed")
    assert rows.count() == 10 and rows.first.get_attribute("data-case") == "c120"
    assert "show=improved" in page.url
    page.select_option("#cmp-show", "unchanged")
    page.wait_for_selector(".compare .listed >> text=100 of 120 unchanged cases listed")
    assert rows.first.get_attribute("data-case") == "c130" and "m: 1 → 1" in rows.first.inner_text()
    page.select_option("#cmp-show", "regressed")
    page.wait_for_selector(".compare .listed >> text=100 of 120 regressed cases listed")
    page.click("#cmp-more")
    page.wait_for_selector('table.cmp tbody tr[data-case="c119"]')
    assert rows.count() == 120
