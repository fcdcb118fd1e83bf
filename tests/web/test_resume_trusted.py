"""A run started from the web reads its eval set as the CLI does (a case at a time, the file's
record journaled), and resuming it from the web over the same bytes does not check the set's
cases again; over changed bytes it does."""

from __future__ import annotations

from pathlib import Path

from agenteval.runner.durable import fingerprint
from agenteval.schema import EvalSetRef, RunSpec
from agenteval.web import create_app
from agenteval.web.routes.launch import RunBody, prepare_run
from tests.helpers import eval_set, inv
from tests.web.api_support import write_agents

RUN = "20260101-000000-abcdef"


def test_a_web_resume_over_the_same_bytes_trusts_the_journaled_record(tmp_path: Path) -> None:
    agents = write_agents(tmp_path / "agents")
    path = agents / "echo" / "smoke.evalset.json"
    path.write_text(eval_set("smoke", {f"c{i}": [inv(f"q{i}", f"echo: q{i}")] for i in range(4)})
                    .model_dump_json(indent=2))
    web = create_app(agents).state.web
    job, _, services, _ = prepare_run(web, "echo", "smoke", RunBody(criteria={"response_match_score": 0.5}))
    (first,) = job.selections
    assert first.streamed is not None and first.streamed.record is not None and first.streamed.validated == 4
    assert services.journal is not None
    spec = RunSpec(run_id=RUN, command="web", started=1.0, eval_sets=[EvalSetRef(eval_set_id="smoke")],
                   config=job.config.model_dump(mode="json"), num_runs=1)
    services.journal.begin(spec, fingerprint(job), 4)
    services.journal.close()  # the server went away: the run is interrupted

    for same in (True, False):
        if not same:  # other bytes, the same set: checked again
            path.write_text(path.read_text().replace("\n", "\n "))
        again, _, resumed, _ = prepare_run(web, "echo", "smoke", RunBody(resume=RUN))
        (selection,) = again.selections
        assert selection.streamed is not None
        checked = (selection.streamed.trusted, selection.streamed.validated)
        assert checked == ((True, 0) if same else (False, 4))
        assert selection.digest() == first.digest()
        assert resumed.journal is not None
        resumed.journal.close()
