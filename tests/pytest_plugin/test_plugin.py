"""The pytest plugin, exercised in a child pytest run (pytester)."""

import http.cookiejar  # noqa: F401  (see below)
import importlib.util
import json
from pathlib import Path

import pytest

from tests.fake_server import FakeServer
from tests.helpers import call, eval_set, inv

pytest_plugins = ["pytester"]

# The child runs import http.cookiejar (through httpx); pytester then drops it from sys.modules but
# not from the `http` package's attributes, so a later `from http import cookiejar` and a later
# `import http.cookiejar` gave two modules: requests (the OTLP exporter's) refused its own cookie
# jar in the next test of this worker that exported spans. Imported here, it stays one module.

AGENT = '''
def root_agent(text, state):
    return {"response": "answer to " + text,
            "tool_calls": [{"name": "lookup", "args": {"q": text}, "response": {"ok": True}}]}
'''


@pytest.fixture
def project(pytester: pytest.Pytester) -> Path:
    agent = pytester.path / "my_agent"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    s = eval_set("myset", {
        "good": [inv("x", "answer to x", [call("lookup", q="x")])],
        "bad": [inv("y", "answer to y", [call("other")])],
    })
    (agent / "myset.evalset.json").write_text(s.model_dump_json(exclude_none=True))
    (agent / "test_config.json").write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": 1.0}}))
    return agent


def test_not_collected_without_opt_in(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_one_item_per_case_with_readable_failure(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest("--agenteval", "--agenteval-num-runs", "2", "-v")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "myset.evalset.json::good PASSED" in out
    assert "tool_trajectory_avg_score" in out and "other()" in out
    assert "Traceback" not in out
    assert list((pytester.path / ".agenteval" / "eval_history").glob("*.evalset_result.json"))
    from agenteval.store import RunStore

    header = RunStore(pytester.path).header("latest")
    assert header is not None and header.command == "pytest" and header.num_runs == 2
    assert header.agent is not None and (header.agent.name, header.agent.kind) == ("my_agent", "callable")
    assert header.eval_sets[0].eval_set_id == "myset" and header.eval_sets[0].sha256


def test_ini_opt_in_and_bad_file(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeini("[pytest]\nagenteval = true\n")
    (project / "broken.evalset.json").write_text('{"eval_set_id": "b", "eval_cases": [{"eval_id": 1}]}')
    result = pytester.runpytest()
    out = result.stdout.str()
    assert "broken.evalset.json: eval_cases[0].eval_id" in out
    result.assert_outcomes(errors=1)  # pytest stops on collection errors, as for any test file
    result = pytester.runpytest("--continue-on-collection-errors")
    result.assert_outcomes(passed=1, failed=1, errors=1)


def test_the_configs_endpoint_settings_are_in_force(pytester: pytest.Pytester, project: Path,
                                                    server: FakeServer) -> None:
    # A judge that never answers: the config's timeout and attempts are what the run waits,
    # and what its header records (not the defaults, 60 s × 3).
    from tests.fake_server import Step

    server.steps = [Step(delay=30)]
    url = f"openai-compat:m@{server.base_url}"
    (project / "test_config.json").write_text(json.dumps({
        "criteria": {"final_response_match_v2": {"threshold": 0.5, "judge_model_options": {
            "judge_model": url, "num_samples": 1}}},
        "endpoints": {url: {"timeout": 0.3, "attempts": 2}}}))
    pytester.makeini("[pytest]\nagenteval = true\n")
    result = pytester.runpytest("-k", "good", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, deselected=1)
    assert "within 0.3 s" in result.stdout.str()
    assert len(server.received) == 2  # the one case -k left, asked twice
    from agenteval.store import RunStore

    header = RunStore(pytester.path).header("latest")
    assert header is not None and header.endpoints[url].timeout == 0.3
    assert header.endpoints[url].attempts == 2


@pytest.mark.parametrize(("flag", "explained"), [((), True),
                                                 (("--agenteval-judge-rationales", "never"), False)])
def test_the_judge_rationales_option_reaches_the_judge(pytester: pytest.Pytester, project: Path,
                                                       server: FakeServer, flag: tuple[str, ...],
                                                       explained: bool) -> None:
    # A judge without log-probabilities answers in written samples, each asked in the reply schema:
    # under "never" that schema has no rationale.
    from tests.fake_server import Step

    reply = {"model": "m", "usage": {"prompt_tokens": 5, "completion_tokens": 2}, "choices": [
        {"index": 0, "finish_reason": "stop",
         "message": {"role": "assistant", "content": json.dumps({"verdict": "invalid"})}}]}
    server.steps = [Step(200, reply)]
    url = f"openai-compat:m@{server.base_url}"
    (project / "test_config.json").write_text(json.dumps({"criteria": {"final_response_match_v2": {
        "threshold": 0.5, "judge_model_options": {"judge_model": url, "num_samples": 1}}}}))
    result = pytester.runpytest("--agenteval", "-k", "good", "-p", "no:cacheprovider", *flag)
    result.assert_outcomes(failed=1, deselected=1)  # the judge said invalid
    schemas = [json.dumps(body.get("response_format")) for body in server.received]
    assert schemas and all(("rationale" in s) == explained for s in schemas)


def _log_prompts(project: Path) -> None:
    """The project's agent, appending each prompt it is given to `prompts.txt` beside it."""
    (project / "agent.py").write_text(
        "from pathlib import Path\n" + AGENT.replace(
            "def root_agent(text, state):\n",
            "def root_agent(text, state):\n"
            "    with open(Path(__file__).with_name('prompts.txt'), 'a') as f:\n"
            "        f.write(text + '\\n')\n"))


def test_deselected_cases_are_not_run(pytester: pytest.Pytester, project: Path) -> None:
    # `-k` picks the case to work on: the others are neither run (an embedded or hosted model's
    # time) nor recorded in the history as if asked for.
    _log_prompts(project)
    result = pytester.runpytest("--agenteval", "-k", "bad", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, deselected=1)
    assert (project / "prompts.txt").read_text().split() == ["y"]
    from agenteval.store import RunStore

    row = RunStore(pytester.path).resolve("latest")
    assert (row.cases_total, row.cases_failed) == (1, 1)


def test_an_empty_eval_set_fails_collection(pytester: pytest.Pytester, project: Path) -> None:
    # As `agenteval eval` refuses it: a set emptied by mistake must not pass a CI gate green.
    (project / "empty.evalset.json").write_text('{"eval_set_id": "e", "eval_cases": []}')
    result = pytester.runpytest("--agenteval", "-p", "no:cacheprovider", str(project / "empty.evalset.json"))
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(errors=1)
    assert "empty.evalset.json: eval_cases: the list is empty" in result.stdout.str()


AT_LEAST_1 = "Input should be greater than or equal to 1"


@pytest.mark.parametrize(("args", "ini", "said"), [
    (("--agenteval-num-runs", "0"), "", f"--agenteval-num-runs: {AT_LEAST_1}"),
    (("--agenteval-parallelism", "-3"), "", f"--agenteval-parallelism: {AT_LEAST_1}"),
    (("--agenteval-case-timeout", "0"), "", "--agenteval-case-timeout: Input should be greater than 0"),
    ((), "agenteval_num_runs = abc\n", "ini option agenteval_num_runs: Input should be a valid integer"),
])
def test_a_refused_option_is_a_usage_error_naming_it(pytester: pytest.Pytester, project: Path,
                                                     args: tuple[str, ...], ini: str, said: str) -> None:
    # Once, before anything runs: not a validation traceback from every item.
    pytester.makeini("[pytest]\nagenteval = true\n" + ini)
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert said in result.stderr.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert not (pytester.path / ".agenteval").exists()


def test_a_misspelt_opt_in_is_a_usage_error_naming_it(pytester: pytest.Pytester, project: Path) -> None:
    # `agenteval = ture` ended in INTERNALERROR with pytest's traceback.
    pytester.makeini("[pytest]\nagenteval = ture\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ini option agenteval: invalid truth value 'ture'" in result.stderr.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_file_whose_run_failed_is_not_run_again_for_each_item(pytester: pytest.Pytester,
                                                                project: Path) -> None:
    # The run history cannot be written: every item says so, and the cases ran once, not once per item.
    _log_prompts(project)
    (pytester.path / ".agenteval").mkdir()
    (pytester.path / ".agenteval" / "history.sqlite").write_bytes(b"not a database" * 100)
    result = pytester.runpytest("--agenteval", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    assert result.stdout.str().count("history.sqlite: cannot use the run database") >= 2
    assert sorted((project / "prompts.txt").read_text().split()) == ["x", "y"]


def test_the_ini_agent_is_found_from_the_ini_files_folder(pytester: pytest.Pytester, project: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # pytest run from a subfolder (an IDE running one file does): the ini's path is the ini file's.
    pytester.makeini("[pytest]\nagenteval = true\nagenteval_agent = my_agent\n")
    monkeypatch.chdir(project)
    result = pytester.runpytest("-p", "no:cacheprovider", "myset.evalset.json")
    result.assert_outcomes(passed=1, failed=1)


@pytest.mark.parametrize(("args", "ini", "said"), [
    (("--agenteval-judge-model", "bogus"), "", "--agenteval-judge-model: unknown model 'bogus'"),
    ((), "agenteval_judge_model = bogus\n", "ini option agenteval_judge_model: unknown model 'bogus'"),
    (("--agenteval-agent-model", "local"), "", "--agenteval-agent-model applies to agenteval Agent agents"),
    (("--agenteval-executor", "ray", "--agenteval-isolation", "process"), "",
     "--agenteval-isolation process runs case runs in worker processes of this machine: it works "
     "with the local executor, not with --agenteval-executor ray"),
])
def test_a_failing_item_names_the_option_as_given_to_pytest(
        pytester: pytest.Pytester, project: Path, args: tuple[str, ...], ini: str, said: str) -> None:
    # They said `--judge_model`, `--agent_model`, ...: flags of `agenteval eval`, not of pytest.
    # In a process of its own: the Ray case starts a real local cluster, and one started under
    # pytester (which puts back sys.modules after the test) broke the suite's later `ray.init`.
    pytester.makeini("[pytest]\nagenteval = true\n" + ini)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    assert out.count(said) >= 2, out
    assert "_model" not in out.replace("agenteval_judge_model", ""), out


def _ray_that_cannot_start(pytester: pytest.Pytester) -> Path:
    """A conftest for pytest run by `runpytest_subprocess` in which `ray.init` fails as a local
    node that does not start in time does, each call logged; the log's path. Ray is driven in a
    process of its own: pytester puts back this process's sys.modules after the test, so Ray
    imported here would be imported again later beside its loaded C extension, and the suite's
    real `ray.init` then failed (an auth token mismatch, or a crash)."""
    if importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed (pip install 'agenteval[ray]')")
    (pytester.path / "conftest.py").write_text(
        "import ray\n\n\n"
        "def _init(**kwargs):\n"
        "    with open('ray_tries.log', 'a') as f:\n"
        "        f.write('try\\n')\n"
        "    raise Exception('The current node timed out during startup. "
        "This could happen because ...')\n\n\n"
        "ray.is_initialized = lambda: False\n"
        "ray.init = _init\n")
    return pytester.path / "ray_tries.log"


def test_a_ray_cluster_that_cannot_start_fails_each_item_with_the_reason(
        pytester: pytest.Pytester, project: Path) -> None:
    # Each item showed Ray's 2,000-line traceback; the cluster was tried again for every file.
    tries = _ray_that_cannot_start(pytester)
    (project / "other.evalset.json").write_text((project / "myset.evalset.json").read_text())
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--agenteval",
                                           "--agenteval-executor", "ray")
    result.assert_outcomes(failed=4)
    out = result.stdout.str()
    assert out.count("cannot use a local Ray cluster: The current node timed out during startup.") >= 4
    assert "Traceback" not in out and "def _init" not in out
    assert tries.read_text().splitlines() == ["try"]


def test_ray_with_process_isolation_is_refused_before_a_cluster_starts(
        pytester: pytest.Pytester, project: Path) -> None:
    # The refusal came after a local cluster had started (5-10 s) for it.
    tries = _ray_that_cannot_start(pytester)
    pytester.makeini("[pytest]\nagenteval = true\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--agenteval-executor", "ray",
                                           "--agenteval-isolation", "process")
    result.assert_outcomes(failed=2)
    assert "--agenteval-isolation process runs case runs in worker processes" in result.stdout.str()
    assert not tries.exists()


def test_a_legacy_test_files_item_is_named_the_same_on_every_machine(pytester: pytest.Pytester,
                                                                      project: Path) -> None:
    # Its one case's id is the file's path (as ADK's): the node id held this checkout's absolute path.
    (project / "old.test.json").write_text(json.dumps([
        {"query": "x", "expected_tool_use": [{"tool_name": "lookup", "tool_input": {"q": "x"}}]}]))
    result = pytester.runpytest("-p", "no:cacheprovider", "--agenteval", "-v", "my_agent/old.test.json")
    result.assert_outcomes(passed=1)
    assert "my_agent/old.test.json::old.test.json PASSED" in result.stdout.str()
    assert str(pytester.path) not in result.stdout.str().split("collected")[1].split("passed")[0]


def test_a_case_skipped_or_xfailed_by_a_marker_is_reported_so(pytester: pytest.Pytester,
                                                                project: Path) -> None:
    # A `skip` marker added in a conftest ended the session in INTERNALERROR (pytest's report
    # of a skipped item needs the item's line, which was None).
    pytester.makeconftest(
        "import pytest\n\n\n"
        "def pytest_collection_modifyitems(items):\n"
        "    for item in items:\n"
        "        item.add_marker(pytest.mark.skip(reason='flaky') if item.name == 'good'\n"
        "                        else pytest.mark.xfail(reason='known'))\n")
    result = pytester.runpytest("--agenteval", "-p", "no:cacheprovider", "-rsx")
    result.assert_outcomes(skipped=1, xfailed=1)
    assert result.ret == pytest.ExitCode.OK
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert "flaky" in result.stdout.str() and "known" in result.stdout.str()


@pytest.mark.parametrize("mark", ["pytest.mark.skip(reason='flaky')",
                                  "pytest.mark.skipif(True, reason='flaky')",
                                  "pytest.mark.xfail(run=False, reason='flaky')"])
def test_a_case_a_marker_keeps_from_running_is_neither_run_nor_recorded(
        pytester: pytest.Pytester, project: Path, mark: str) -> None:
    # It was run with the file's other cases (a model's time) and recorded in the history as
    # failed, while pytest said skipped: the history's run was red for a green session.
    _log_prompts(project)
    pytester.makeconftest(
        "import pytest\n\n\n"
        "def pytest_collection_modifyitems(items):\n"
        "    for item in items:\n"
        f"        if item.name == 'bad':\n            item.add_marker({mark})\n")
    result = pytester.runpytest("--agenteval", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK
    assert (project / "prompts.txt").read_text().split() == ["x"]
    from agenteval.store import RunStore

    row = RunStore(pytester.path).resolve("latest")
    assert (row.cases_total, row.cases_failed) == (1, 0)


def test_an_item_run_again_runs_its_case_again(pytester: pytest.Pytester, project: Path) -> None:
    # A rerun plugin (`--reruns`) runs a failed item again: it was answered from the file's first
    # results, so a flaky case was never run again and "rerun" changed nothing.
    (project / "agent.py").write_text(
        "from pathlib import Path\n\n\n"
        "def root_agent(text, state):\n"
        "    seen = Path(__file__).with_name('seen.txt')\n"
        "    first = not seen.exists()\n"
        "    seen.write_text('x')\n"
        "    tool = 'nothing' if first else 'lookup'\n"
        "    return {'response': 'answer to ' + text,\n"
        "            'tool_calls': [{'name': tool, 'args': {'q': text}, 'response': {}}]}\n")
    pytester.makeconftest(
        "from _pytest.runner import runtestprotocol\n\n\n"
        "def pytest_runtest_protocol(item, nextitem):\n"
        "    reports = runtestprotocol(item, nextitem=nextitem, log=False)\n"
        "    if any(r.failed for r in reports):\n"
        "        reports = runtestprotocol(item, nextitem=nextitem, log=False)\n"
        "    for report in reports:\n"
        "        item.ihook.pytest_runtest_logreport(report=report)\n"
        "    return True\n")
    result = pytester.runpytest("--agenteval", "-p", "no:cacheprovider", "-k", "good")
    result.assert_outcomes(passed=1, deselected=1)
    from agenteval.store import RunStore

    rows = RunStore(pytester.path).resolve("latest")
    assert (rows.cases_total, rows.cases_failed) == (1, 0)  # the second run, recorded


def test_the_executor_option_says_which_cluster_it_uses(pytester: pytest.Pytester) -> None:
    # Its help named RAY_ADDRESS and a new local cluster only: a cluster `ray start` runs on
    # this machine, which the run joins first (as `eval --executor ray` says), went unmentioned.
    text = " ".join(pytester.runpytest("--help").stdout.str().split())
    help_text = text[text.index("--agenteval-executor"):][:400]
    assert "ray start" in help_text and "RAY_ADDRESS" in help_text and "agenteval[ray]" in help_text
