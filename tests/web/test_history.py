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
