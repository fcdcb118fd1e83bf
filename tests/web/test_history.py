"""The web's cache of loaded result documents: bounded in number and in bytes, one load each."""

import threading
import time
from pathlib import Path

import pytest

from agenteval.store import RunStore, record_run
from agenteval.web import history
from agenteval.web.agents import AgentsDir
from agenteval.web.history import StoredRun, Stores
from tests.result_builders import case, result


def _runs(root: Path, n: int) -> list[StoredRun]:
    for i in range(n):
        doc = result([case(f"c{k}", {"m": 1.0}) for k in range(3)], result_id=f"s_{i}")
        doc.creation_timestamp = 1000.0 + i
        record_run(root, [doc])
    return [StoredRun(None, root, row) for row in reversed(RunStore(root).list_runs())]


def test_documents_are_kept_up_to_the_count_and_the_bytes(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, c = _runs(tmp_path, 3)
    stores = Stores(AgentsDir(tmp_path))
    first = stores.document(a)
    assert stores.document(b) is stores.document(b) and stores.document(a) is first  # both kept
    monkeypatch.setattr(history, "_CACHED_BYTES", 0)  # (a document of 50,000 cases: 700 MB)
    kept = stores.document(c)  # room made first: the others go before it is loaded
    assert stores.document(c) is kept  # the last one read stays
    assert stores.document(a) is not first  # read again


def test_two_requests_for_one_document_load_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (run,) = _runs(tmp_path, 1)
    stores = Stores(AgentsDir(tmp_path))
    loads: list[Path] = []
    real = history.load_result

    def slow_load(path: Path) -> object:
        loads.append(path)
        time.sleep(0.3)  # (a large document takes seconds: the second request comes meanwhile)
        return real(path)

    monkeypatch.setattr(history, "load_result", slow_load)
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(stores.document(run))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loads) == 1 and got[0] is got[1]


def test_one_case_and_a_page_are_read_without_loading_the_document(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (run,) = _runs(tmp_path, 1)
    whole = Stores(AgentsDir(tmp_path)).document(run)
    stores = Stores(AgentsDir(tmp_path))
    monkeypatch.setattr(history, "load_result", lambda path: pytest.fail("the document was loaded"))
    head, found = stores.case(run, "c1")
    assert found is not None and found.runs == [whole.eval_case_results[1]]
    assert head.eval_set_result_id == whole.eval_set_result_id
    assert stores.case(run, "nope")[1] is None
    assert stores.case_page(run, 1, 5, None) == (3, whole.eval_case_results[1:])


@pytest.mark.parametrize("change", ["compact", "changed under the same size and time"])
def test_a_document_without_a_usable_index_is_read_whole(tmp_path: Path, change: str) -> None:
    import os

    (run,) = _runs(tmp_path, 1)
    path = run.row.result_path
    stores = Stores(AgentsDir(tmp_path))
    if change == "compact":
        path.write_text(stores.document(run).model_dump_json())
    else:
        stores.case(run, "c0")  # indexed as it was
        info = path.stat()
        path.write_bytes(path.read_bytes().replace(b'"c1"', b'"c9"'))
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    _, found = stores.case(run, "c0")
    assert found is not None and found.runs[0].eval_id == "c0"
    total, page = stores.case_page(run, 0, 10, None)
    assert total == 3 and [r.eval_id for r in page] == ["c0", "c9" if change != "compact" else "c1", "c2"]


def test_what_a_runs_cases_give_is_read_a_case_at_a_time_and_kept(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from agenteval.verdicts import outcomes

    (run,) = _runs(tmp_path, 1)
    want = outcomes(Stores(AgentsDir(tmp_path)).document(run))
    stores = Stores(AgentsDir(tmp_path))
    monkeypatch.setattr(history, "load_result", lambda path: pytest.fail("the document was loaded"))
    calls: list[int] = []

    def ids(cases: object) -> list[str]:
        calls.append(1)
        return [c.eval_id for c in cases]  # type: ignore[attr-defined]

    assert stores.over_cases(run, ids) == [c.eval_id for c in want] == ["c0", "c1", "c2"]
    assert stores.over_cases(run, ids) == ["c0", "c1", "c2"] and calls == [1]  # kept
