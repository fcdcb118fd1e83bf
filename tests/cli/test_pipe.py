"""A command whose output's reader stops reading (`| head -1`) still records its run."""

import subprocess
import sys
from pathlib import Path

import pytest

from agenteval.store import RunStore

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "parity"
SCORE = [sys.executable, "-m", "agenteval", "score", str(FIXTURES / "expected.evalset.json"),
         "--actual", str(FIXTURES / "actual.evalset.json"),
         "--config_file_path", str(FIXTURES / "config_rouge.json"), "--history"]


@pytest.mark.parametrize("together", [False, True], ids=["stdout", "stdout-and-stderr"])
def test_score_piped_to_a_reader_that_stops_records_its_run(tmp_path: Path, together: bool) -> None:
    # The reader is gone before the first line: every write of the command finds the pipe
    # broken. It raised BrokenPipeError out of the command, exit 1 with no run recorded.
    errors = tmp_path / "stderr.txt"
    with errors.open("w") as err:
        proc = subprocess.Popen(SCORE, cwd=tmp_path, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT if together else err)
        assert proc.stdout is not None
        proc.stdout.close()
        code = proc.wait(timeout=120)
    (tmp_path / "unpiped").mkdir()
    unpiped = subprocess.run(SCORE, cwd=tmp_path / "unpiped", capture_output=True, check=False)
    assert code == unpiped.returncode == 1  # (the run's own: some of its cases fail)
    assert errors.read_text() == ""  # no traceback, no "Exception ignored" at exit
    runs = RunStore(tmp_path).list_runs()
    assert len(runs) == 1 and runs[0].cases_total == 60


def test_report_junit_to_a_reader_that_stops_exits_0_quietly(tmp_path: Path) -> None:
    # The streamed JUnit report goes to standard output in bytes (its blocks, UTF-8), through
    # the stream's binary buffer: that bypassed the dropped-writes guard, and click turned the
    # BrokenPipeError into exit 1 with no message, where every text report exits 0.
    subprocess.run(SCORE, cwd=tmp_path, capture_output=True, check=False)
    report = [sys.executable, "-m", "agenteval", "report", "latest", "--format", "junit"]
    errors = tmp_path / "stderr.txt"
    with errors.open("w") as err:
        proc = subprocess.Popen(report, cwd=tmp_path, stdout=subprocess.PIPE, stderr=err)
        assert proc.stdout is not None
        proc.stdout.close()
        code = proc.wait(timeout=120)
    assert (code, errors.read_text()) == (0, "")
    whole = subprocess.run(report, cwd=tmp_path, capture_output=True, check=True)
    assert whole.stdout.startswith(b"<?xml")
