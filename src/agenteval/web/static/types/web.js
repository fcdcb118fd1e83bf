/* The web API's types, generated from its OpenAPI schema (GET /openapi.json) by
 * agenteval.web.openapi: do not edit; regenerate with
 * `AGENTEVAL_WRITE_TYPES=1 python -m pytest tests/web/test_contract.py`.
 * The page's modules name them in @type and @param annotations, and tests/web/test_contract.py
 * checks that they read only the fields listed here. */

/**
 * @typedef {Object} AddSession
 * @property {string} eval_id
 * @property {string} session_id
 * @property {string} user_id
 */

/**
 * One agent in an invocation's agent tree (`tracing.agent_summary`), as the CLI and the
 * HTML report show it.
 * @typedef {Object} AgentNodeView
 * @property {string} agent - The agent's name.
 * @property {string|null} via - How control reached it: handoff, tool, sequential, parallel, loop or sub_agent (None: the invocation's first agent).
 * @property {Array<string>} span_ids - Its runs' `agent` spans in the trace (empty: calls were expected from it, it never ran).
 * @property {Array<string>} facts - What its line says: how it was reached, its runs, its own calls, tokens, time and tools.
 * @property {boolean|null} passed - Whether its calls matched when a criterion matched them on their own (None: none did).
 * @property {string|null} verdict - That verdict in words: `✓ calls matched`, or `✗` and why (naming both agents for a call made by the wrong one).
 * @property {Array<AgentNodeView>} children - The agents it handed control to, called as tools, or ran as workflow stages.
 */

/**
 * An agent folder under AGENTS_DIR, imported.
 * @typedef {Object} AppInfo
 * @property {string} name - The folder's name (the `app` of every path).
 * @property {string|null} kind - What kind of agent it is (None when it could not be imported).
 * @property {string|null} error - Why it could not be imported (None when it was).
 */

/**
 * An argument that differs between an expected call and the actual call paired with it.
 * @typedef {Object} ArgumentDiff
 * @property {string} name - The argument.
 * @property {*} expected - Its expected value (None when missing).
 * @property {*} actual - Its actual value (None when missing).
 * @property {"expected"|"actual"|null} missing - The side that lacks the argument, if one does.
 */

/**
 * An expected call paired with the actual call of the same tool (the n-th with the n-th).
 * @typedef {Object} CallPair
 * @property {string} tool - The tool.
 * @property {number|null} expected_index - The expected call's index (None: made, not expected).
 * @property {number|null} actual_index - The actual call's index (None: expected, not made).
 * @property {"same"|"different"|"missing"|"unexpected"} status - How the pair compares.
 * @property {Array<ArgumentDiff>} arguments - The arguments that differ.
 */

/**
 * A run asked to stop.
 * @typedef {Object} Cancelling
 * @property {string} run_id - The run.
 * @property {"cancelling"} state - Always `cancelling`: the run's events say when it has stopped.
 */

/**
 * One case, baseline against candidate.
 * @typedef {Object} CaseChange
 * @property {string} eval_id - The case.
 * @property {"newly failed"|"regressed"|"newly passed"|"improved"|"added"|"removed"|"unchanged"} change - What happened to it.
 * @property {boolean} regressed - It or one of its criteria regressed or newly failed.
 * @property {"passed"|"failed"|"not_evaluated"|"informational"|null} before - The baseline's verdict (None: not in the baseline).
 * @property {"passed"|"failed"|"not_evaluated"|"informational"|null} after - The candidate's verdict (None: not in the candidate).
 * @property {Array<CriterionChange>} criteria - Its criteria.
 */

/**
 * A case run in a page of a run's cases.
 * @typedef {Object} CaseRow
 * @property {string} eval_id - The case.
 * @property {number} run_index - Which of its runs.
 * @property {"passed"|"failed"|"not_evaluated"|"informational"} status - The case run's status.
 * @property {Array<ScoreCell>} metrics - Each criterion's score.
 * @property {string|null} error - The agent's error when inference failed.
 * @property {number} metric_errors - How many criteria failed to score.
 * @property {Array<string>} [warnings] - What the case run said of itself, passed or not (`EvalCaseResult.warnings`).
 * @property {number|null} [seconds] - The agent's time over the case run's turns, summed (None when no turn was timed).
 * @property {number|null} [tokens] - The agent's tokens over the case run's turns, summed (None when none were reported).
 */

/**
 * A case of a run that did not pass: its verdict and why.
 * @typedef {Object} CaseVerdict
 * @property {string} eval_id - The case.
 * @property {"passed"|"failed"|"not_evaluated"|"informational"} status - Its verdict over its runs.
 * @property {number} runs - How many times it ran.
 * @property {Array<SummaryMetric>} metrics - Each criterion's summary over its runs.
 * @property {Array<string>} problems - Why it did not pass, one line per failing criterion.
 */

/**
 * One case run whole, its verdict over runs and why it failed.
 * @typedef {Object} CaseView
 * @property {string} run_id - The document's id.
 * @property {string|null} [run_group] - The run (`RunSpec.run_id`, as `agenteval eval` prints it) the document belongs to.
 * @property {string|null} app - The agent folder whose history holds the run (None: AGENTS_DIR's own).
 * @property {string} eval_set_id - The eval set.
 * @property {string} eval_id - The case.
 * @property {number} run_index - The run shown.
 * @property {Array<number>} runs - The case's run indexes.
 * @property {"passed"|"failed"|"not_evaluated"|"informational"} status - This run's status.
 * @property {"passed"|"failed"|"not_evaluated"|"informational"} verdict - The case's verdict over its runs.
 * @property {Array<SummaryMetric>} summary - Each criterion over the case's runs.
 * @property {Array<string>} problems - Why the case did not pass, as `runs show` says it (each judged criterion's certificate last); for a case that passed, what counted against it (negative judge verdicts, errors).
 * @property {Array<string>} [reviewable] - The run's judged criteria: those whose reviews `agenteval judge calibrate --from_reviews` takes as labels (only they are offered a review).
 * @property {Array<InvocationView>} invocations - Per invocation: the diffs and scores.
 * @property {EvalCaseResult} result - The case run as stored (trace and judge records included).
 * @property {Array<InvocationAgentsView>} agents - Each invocation's agent tree when more than one agent ran in the case run, else empty.
 */

/**
 * One turn of a chat session.
 * @typedef {Object} ChatTurnView
 * @property {string} user - The user's text.
 * @property {string} response - The agent's final answer as text ('' when it gave none).
 * @property {Array<ToolCall>} tool_calls - The tool calls the agent made, in order.
 * @property {Array<ToolResult>} tool_responses - The tools' responses, in order.
 * @property {Invocation} invocation - The turn as an eval set holds it.
 * @property {Trace|null} trace - What happened inside the turn (None when no trace was kept).
 * @property {string|null} error - The agent's error when the turn failed.
 * @property {Array<string>} warnings - What was lost making the agent's values JSON.
 * @property {Array<InvocationAgentsView>} agents - The turn's agent tree when more than one agent ran in it, else empty.
 */

/**
 * Two runs compared as `agenteval compare` compares them.
 * @typedef {Object} ComparisonView
 * @property {string} baseline_id - The baseline document.
 * @property {string} candidate_id - The candidate document.
 * @property {string} baseline_set - The baseline's eval set.
 * @property {string} candidate_set - The candidate's eval set.
 * @property {number} margin - Mean-score changes within it count as unchanged.
 * @property {boolean} has_regressions - Whether any case regressed or newly failed.
 * @property {Object<string, number>} counts - Cases by change.
 * @property {"all"|"changed"|"regressed"|"improved"|"unchanged"|"added"|"removed"} show - Which cases are listed: all, changed (it or a criterion changed), regressed (it or a criterion regressed or newly failed), improved (improved or newly passed), unchanged, added, removed.
 * @property {number} total - How many cases `show` names.
 * @property {number} offset - Where `cases` starts among them.
 * @property {Array<CaseChange>} cases - A page of the cases `show` names, in candidate order, then removed cases.
 */

/**
 * One criterion of one case, baseline against candidate.
 * @typedef {Object} CriterionChange
 * @property {string} metric_name - The criterion.
 * @property {"newly failed"|"regressed"|"newly passed"|"improved"|"added"|"removed"|"unchanged"} change - What happened to it.
 * @property {number|null} delta - Candidate mean minus baseline mean (None unless both were scored).
 * @property {boolean|null} significant - Whether the runs' 95% intervals are disjoint (None unless both sides ran more than once).
 * @property {SummaryMetric|null} before - The baseline's summary (None: not scored there).
 * @property {SummaryMetric|null} after - The candidate's summary.
 */

/**
 * A registered criterion a run may use.
 * @typedef {Object} CriterionInfo
 * @property {string} name - The criterion's (metric's) name, as an eval config names it.
 * @property {string} description - What it measures.
 * @property {boolean} judged - Whether an LLM judge scores it (it then takes judge model options).
 * @property {number|null} min_value - The lowest score it gives.
 * @property {number|null} max_value - The highest score it gives.
 * @property {number|null} default_threshold - agenteval's default config's threshold for it, else None.
 * @property {boolean} informational - Reported only: never passes or fails a case.
 */

/**
 * What a DELETE removed.
 * @typedef {Object} Deleted
 * @property {string} deleted - The id of the session or case deleted.
 */

/**
 * What deleting a recorded run removed (`deleted`: its document id).
 * @typedef {Object} DeletedRunView
 * @property {string} deleted - The id of the session or case deleted.
 * @property {number} reviews - How many reviews of it went with it.
 * @property {Array<string>} kept - Its documents left on disk: recorded from where they were written, outside the history.
 */

/**
 * A line of the expected-against-actual tool-call diff.
 * @typedef {Object} DiffLine
 * @property {" "|"-"|"+"} op - ` ` in both, `-` expected and not made, `+` made and not expected.
 * @property {string} call - The call as `name({args})`.
 */

/**
 * Outcome of a metric or case; serialised as ADK's integers.
 * @typedef {1|2|3|4} EvalStatus
 */

/**
 * @typedef {Object} FromRun
 * @property {string} eval_id
 * @property {string} run_id
 * @property {string} case_id
 */

/**
 * @typedef {Object} HTTPValidationError
 * @property {Array<ValidationError>} [detail]
 */

/**
 * The agent tree of one invocation.
 * @typedef {Object} InvocationAgentsView
 * @property {number} index - The invocation's index.
 * @property {Array<AgentNodeView>} roots - Its first agents (and agents calls were expected from that never ran).
 */

/**
 * One invocation of a case run, expected against actual.
 * @typedef {Object} InvocationView
 * @property {number} index - The invocation's index.
 * @property {string} user - The user's text.
 * @property {string|null} expected_response - The expected answer (None when the case has no reference).
 * @property {string} actual_response - The agent's answer.
 * @property {Array<DiffLine>} tool_call_diff - Expected against actual tool calls, line by line.
 * @property {Array<CallPair>} argument_diff - Expected and actual calls paired, with the arguments that differ.
 * @property {Array<ScoreCell>} scores - Each criterion's score for this invocation.
 * @property {Array<number>} judge_records - Indexes into the case run's `judge_records` about this invocation.
 */

/**
 * A run started by this server that is not recorded (yet): running, failed or cancelled.
 * @typedef {Object} JobView
 * @property {string} run_id - The run.
 * @property {string} app - The agent it runs.
 * @property {string} eval_set_id - The eval set it runs.
 * @property {"running"|"recording"|"finished"|"failed"|"cancelled"} state - Where it is.
 * @property {string|null} error - Why it failed.
 * @property {Array<string>} result_ids - Its result documents, once recorded.
 * @property {number} events - Progress events so far (`/api/runs/{run_id}/events` streams them).
 */

/**
 * The case verdict ("overall") or one criterion over the run pairs (`verdicts.paired`).
 * @typedef {Object} MeasureView
 * @property {string} name - "overall" or the criterion's name.
 * @property {number} pairs - Run pairs (same case, same run index).
 * @property {number|null} pass_a - Baseline pass rate over the pairs.
 * @property {number|null} pass_b - Candidate pass rate over the pairs.
 * @property {Array<*>|null} pass_ci - 95% paired-bootstrap interval of pass_b − pass_a (None: not computed).
 * @property {number} a_only - Pairs that passed in the baseline only.
 * @property {number} b_only - Pairs that passed in the candidate only.
 * @property {number} p_value - Exact McNemar test, two-sided.
 * @property {number} p_adjusted - Holm-adjusted over the gate's tests.
 * @property {number|null} score_a - Baseline mean score over the pairs scored on both sides.
 * @property {number|null} score_b - Candidate mean score.
 * @property {Array<*>|null} score_ci - 95% paired-bootstrap interval of score_b − score_a.
 * @property {number|null} score_p - Exact sign test on the score differences, two-sided.
 * @property {"regression"|"improvement"|null} significant - Significant at alpha after adjustment, and which way (None: not significant).
 */

/**
 * @typedef {Object} Message
 * @property {string} text
 */

/**
 * @typedef {Object} NewSession
 * @property {Object<string, *>} [state]
 * @property {string|null} [model] - Model for the agent, replacing its own (agenteval Agent only), e.g. `openai-compat:M@http://host/v1`.
 */

/**
 * One case judged from its own runs: Fisher exact test of its pass counts.
 * @typedef {Object} PairedCaseView
 * @property {string} eval_id - The case.
 * @property {"REGRESSED"|"IMPROVED"|"INCONCLUSIVE"|"UNCHANGED"|"ADDED"|"REMOVED"} change - What happened to it.
 * @property {number} passed_a - Baseline runs passed.
 * @property {number} runs_a - Baseline runs.
 * @property {number} passed_b - Candidate runs passed.
 * @property {number} runs_b - Candidate runs.
 * @property {number|null} p_value - Fisher exact, two-sided (None: on one side only).
 * @property {Array<*>|null} pass_k_a - Baseline (pass@k, pass^k), k capped at its runs (None: no runs).
 * @property {Array<*>|null} pass_k_b - Candidate (pass@k, pass^k).
 */

/**
 * Two runs compared pair by pair, as `agenteval compare` decides.
 * @typedef {Object} PairedView
 * @property {string} baseline_id - The baseline document.
 * @property {string} candidate_id - The candidate document.
 * @property {number} alpha - Significance level.
 * @property {string} decision - The gate's verdict in one line.
 * @property {boolean} gate_failed - Whether `agenteval compare` (--fail_on regression) would exit 1.
 * @property {Array<MeasureView>} measures - The case verdict first, then each criterion.
 * @property {Object<string, number>} counts - Cases by change.
 * @property {number} total - How many cases are named (by `eval_id`, else by `change`, else all).
 * @property {number} offset - Where `cases` starts among them.
 * @property {Array<PairedCaseView>} cases - A page of the cases named, in candidate order, then removed cases.
 * @property {number} k - k of pass@k and pass^k.
 * @property {Array<*>|null} pass_k_a - Baseline (pass@k, pass^k), means over the cases on both sides.
 * @property {Array<*>|null} pass_k_b - Candidate (pass@k, pass^k).
 * @property {string|null} inconclusive - Why cases are INCONCLUSIVE and what would decide them, as `agenteval compare` says it (`reporting.paired.inconclusive_line`); None when no case is.
 * @property {Array<string>} criteria_differ - What differs between the two runs' criteria (`reporting.paired.config_differences`): their passes are judged against different bars. Empty when they agree or a config is unknown.
 */

/**
 * A run of an eval set's cases, as the web asks for it (see `RunRequest` for each field).
 * @typedef {Object} RunBody
 * @property {Array<string>|null} [eval_ids] - Cases to run (null: every case).
 * @property {Object<string, *>|null} [criteria] - Criteria as in an eval config: name to threshold or criterion object (null: test_config.json beside the set, else the defaults, as agenteval eval).
 * @property {string|null} [judge_model] - The judge of every judged criterion.
 * @property {string|null} [escalate_judge_model] - Where every judged criterion's uncertain verdicts go.
 * @property {number|null} [num_samples] - Judge samples per question.
 * @property {"negative"|"always"|"never"|null} [judge_rationales] - Which judge verdicts get a written rationale (null: each criterion's own, else negative).
 * @property {number} [num_runs] - Runs of every case.
 * @property {string|null} [agent_model] - Model replacing the agent's own.
 * @property {number} [parallelism] - Case runs in flight at once.
 * @property {number|null} [case_timeout] - Seconds per case run.
 * @property {string|null} [resume] - An interrupted run of this agent to finish (its id, a unique prefix, or latest): only what it lacks runs.
 * @property {boolean} [retry_errors] - With resume: also run again the case runs that ended in an error.
 */

/**
 * What `agenteval eval` would use for an eval set: the run dialog opens with it.
 * @typedef {Object} RunDefaults
 * @property {Object<string, Object<string, *>>} criteria - Criteria by name, each its resolved criterion object (threshold, match type, judge model options, ...), the informational ones left out.
 * @property {string|null} source - The config they come from, relative to the agent's folder (None: no test_config.json beside the set, so the defaults).
 */

/**
 * A run by its id: one just started, or a document just stored.
 * @typedef {Object} RunRef
 * @property {string} run_id - The run's id: follow it at `/api/runs/{run_id}`.
 */

/**
 * A row of the run history: one result document as the run store lists it.
 * @typedef {Object} RunRow
 * @property {string} run_id - The document's id (`eval_set_result_id`).
 * @property {number} created - When it was recorded (epoch seconds).
 * @property {string} eval_set_id - The eval set it ran.
 * @property {string|null} agent - The agent's name, as the run header records it.
 * @property {string|null} agent_model - The model the agent ran on, when one replaced its own.
 * @property {string|null} judge_model - The judge model.
 * @property {number} num_runs - Runs per case.
 * @property {number} cases_total - Cases in the document.
 * @property {number} cases_passed - Cases that passed.
 * @property {number} cases_failed - Cases that failed (not counting those not evaluated), as `agenteval runs` counts them.
 * @property {number} cases_not_evaluated - Cases no gating criterion gave a verdict for, counted apart from failed ones.
 * @property {number|null} duration_seconds - Wall-clock time when measured, else the agent's summed invocation durations.
 * @property {number|null} total_tokens - Agent tokens.
 * @property {string} result_path - The document's file, relative to its store's folder where it lies inside it.
 * @property {string|null} eval_set_sha256 - The eval set file's hash when the run started.
 * @property {string} gating - How repeated runs decide a case's verdict.
 * @property {string|null} run_group - The run (`RunSpec.run_id`) the document belongs to.
 * @property {string|null} app - The agent folder whose history holds it (None: AGENTS_DIR's own, e.g. an upload).
 * @property {"passed"|"failed"|"not_evaluated"} status - `passed` when every case passed; `failed` when a case failed; else `not_evaluated` (the cases that did not pass were not evaluated).
 */

/**
 * A recorded run: its history row, header, counts and the cases that did not pass.
 * @typedef {Object} RunView
 * @property {string} run_id - The document's id (`eval_set_result_id`).
 * @property {number} created - When it was recorded (epoch seconds).
 * @property {string} eval_set_id - The eval set it ran.
 * @property {string|null} agent - The agent's name, as the run header records it.
 * @property {string|null} agent_model - The model the agent ran on, when one replaced its own.
 * @property {string|null} judge_model - The judge model.
 * @property {number} num_runs - Runs per case.
 * @property {number} cases_total - Cases in the document.
 * @property {number} cases_passed - Cases that passed.
 * @property {number} cases_failed - Cases that failed (not counting those not evaluated), as `agenteval runs` counts them.
 * @property {number} cases_not_evaluated - Cases no gating criterion gave a verdict for, counted apart from failed ones.
 * @property {number|null} duration_seconds - Wall-clock time when measured, else the agent's summed invocation durations.
 * @property {number|null} total_tokens - Agent tokens.
 * @property {string} result_path - The document's file, relative to its store's folder where it lies inside it.
 * @property {string|null} eval_set_sha256 - The eval set file's hash when the run started.
 * @property {string} gating - How repeated runs decide a case's verdict.
 * @property {string|null} run_group - The run (`RunSpec.run_id`) the document belongs to.
 * @property {string|null} app - The agent folder whose history holds it (None: AGENTS_DIR's own, e.g. an upload).
 * @property {"passed"|"failed"|"not_evaluated"} status - `passed` when every case passed; `failed` when a case failed; else `not_evaluated` (the cases that did not pass were not evaluated).
 * @property {RunSpec|null} header - The run header (None for a document recorded without one).
 * @property {SetCounts} counts - Cases by verdict over their runs.
 * @property {Array<string>} criteria - The criteria scored, gating ones first (in the config's order), then informational ones.
 * @property {number} cases_not_passed - How many cases did not pass (`cases` lists the first 100).
 * @property {Array<CaseVerdict>} cases - The first cases that did not pass; every case is paged by `/api/runs/{run_id}/cases`.
 * @property {"running"|"recording"|"finished"|"failed"|"cancelled"} state - `finished` for a recorded run.
 */

/**
 * One criterion's score in one case run (or invocation).
 * @typedef {Object} ScoreCell
 * @property {string} name - The criterion.
 * @property {number|null} score - Its score (None when not scored).
 * @property {number|null} threshold - The threshold it was held to.
 * @property {"passed"|"failed"|"not_evaluated"|"informational"} status - Its status.
 * @property {string|null} reason - Why, as the criterion said where it decided (for a document without reasons: the score against the threshold where it did not pass); None for a pass with nothing stored.
 * @property {string|null} [certificate] - A judged criterion's calibration certificate in the run (`certified: κ …`, `uncalibrated: …`, advisory when it did not gate); None for criteria not judged and older documents.
 */

/**
 * The turn a message gave, with where it is in the session and the state after it.
 * @typedef {Object} SentTurn
 * @property {string} user - The user's text.
 * @property {string} response - The agent's final answer as text ('' when it gave none).
 * @property {Array<ToolCall>} tool_calls - The tool calls the agent made, in order.
 * @property {Array<ToolResult>} tool_responses - The tools' responses, in order.
 * @property {Invocation} invocation - The turn as an eval set holds it.
 * @property {Trace|null} trace - What happened inside the turn (None when no trace was kept).
 * @property {string|null} error - The agent's error when the turn failed.
 * @property {Array<string>} warnings - What was lost making the agent's values JSON.
 * @property {Array<InvocationAgentsView>} agents - The turn's agent tree when more than one agent ran in it, else empty.
 * @property {number} index - The turn's index in the session.
 * @property {Object<string, *>} state - The session's state after the turn.
 */

/**
 * A message or tool event of a session, as ADK's dev server lists them (other keys of the
 * recorded event are kept).
 * @typedef {Object} SessionEvent
 * @property {number} invocation_index - The turn the event belongs to.
 * @property {string|null} [author] - `user`, `agent` or the recorded event's author.
 * @property {Content|null} [content] - The event's content.
 */

/**
 * A chat session as ADK's dev server shows one, with its turns.
 * @typedef {Object} SessionView
 * @property {string} id - The session id.
 * @property {string} app_name - The agent it talks to.
 * @property {string} user_id - The user it belongs to.
 * @property {Object<string, *>} state - The state now.
 * @property {Object<string, *>} initial_state - The state it started with.
 * @property {number} created - When it was created (epoch seconds).
 * @property {string|null} model - The model the agent was asked to run on (None: its own).
 * @property {number} num_turns - How many turns it has.
 * @property {Array<ChatTurnView>|null} turns - Its turns (None in a listing of sessions).
 * @property {Array<SessionEvent>} events - The turns' messages and tool events in order (empty in a listing).
 */

/**
 * A criterion's summary over a case's runs, with its status as a word.
 * @typedef {Object} SummaryMetric
 * @property {string} metric_name
 * @property {number|null} [threshold]
 * @property {number} runs
 * @property {number} scored_runs
 * @property {number} passed_runs
 * @property {number|null} [mean]
 * @property {number|null} [std]
 * @property {number|null} [ci_low]
 * @property {number|null} [ci_high]
 * @property {number|null} [pass_at_k]
 * @property {number|null} [pass_pow_k]
 * @property {EvalStatus} eval_status
 * @property {string|null} [reason]
 * @property {"passed"|"failed"|"not_evaluated"|"informational"} status
 */

/**
 * A tool call the agent made.
 * @typedef {Object} ToolCall
 * @property {string} name - The tool.
 * @property {Object<string, *>|null} args - Its arguments.
 */

/**
 * A tool's response.
 * @typedef {Object} ToolResult
 * @property {string|null} name - The tool (None when the response does not name it).
 * @property {Object<string, *>|null} response - What it returned.
 */

/**
 * One run on the history's charts.
 * @typedef {Object} TrendPoint
 * @property {string} run_id - The document.
 * @property {string|null} run_group - The run it belongs to.
 * @property {string|null} app - The agent folder whose history holds it.
 * @property {number} created - When it was recorded.
 * @property {string} eval_set_id - The eval set.
 * @property {number} cases - Cases in it.
 * @property {number} passed - Cases that passed.
 * @property {number|null} pass_rate - passed / cases (None for no case).
 * @property {Object<string, number>} criteria - Each gating criterion's mean score over its cases.
 */

/**
 * A journaled run that did not finish.
 * @typedef {Object} UnfinishedRun
 * @property {string} run_id - The run: give it as `resume` to finish it.
 * @property {string} status - `interrupted` (nobody owns it: resumable) or `running` (a live process owns it).
 * @property {number} started - When it started (seconds since the epoch).
 * @property {number} done - Case runs finished.
 * @property {number} total - Case runs it covers.
 * @property {number} errors - Finished case runs that ended in an agent or judge error (`retry_errors` runs them again).
 */

/**
 * @typedef {Object} ValidationError
 * @property {Array<string|number>} loc
 * @property {string} msg
 * @property {string} type
 * @property {*} [input]
 * @property {Object<string, *>} [ctx]
 */

export {};
