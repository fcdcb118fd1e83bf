/* The web API's types, generated from its OpenAPI schema (GET /openapi.json) by
 * agenteval.web.openapi: do not edit; regenerate with
 * `AGENTEVAL_WRITE_TYPES=1 python -m pytest tests/web/test_contract.py`.
 * The page's modules name them in @type and @param annotations, and tests/web/test_contract.py
 * checks that they read only the fields listed here. */

/**
 * An agent's instructions and tool declarations as seen during inference.
 * @typedef {Object} AgentDetails
 * @property {string} name
 * @property {string} [instructions]
 * @property {Array<*>} [tool_declarations]
 */

/**
 * The agent under test: its name (the app name results use), where it was loaded from,
 * and the kind of adapter that ran it.
 * @typedef {Object} AgentInfo
 * @property {string|null} [name]
 * @property {string|null} [path]
 * @property {string|null} [kind]
 */

/**
 * One agent's calls in one invocation, matched on their own by a criterion that matches
 * per agent (agenteval extension; `tool_trajectory_avg_score` when the expected events name
 * two authors or more): whether they matched and, when not, why.
 * @typedef {Object} AgentVerdict
 * @property {string} metric_name
 * @property {number} invocation_index
 * @property {string} agent
 * @property {boolean} passed
 * @property {string|null} [reason]
 */

/**
 * Per-agent details captured during inference, keyed by agent name.
 * @typedef {Object} AppDetails
 * @property {Object<string, AgentDetails>} [agent_details]
 */

/**
 * Inline binary data (audio, images).
 * @typedef {Object} Blob
 * @property {string|null} [mime_type]
 * @property {string|null} [data]
 */

/**
 * A case's verdict over its runs, by the configured gating rule (agenteval extension).
 * @typedef {Object} CaseSummary
 * @property {string} eval_id
 * @property {number} runs
 * @property {EvalStatus} final_eval_status
 * @property {Array<MetricSummary>} [metrics]
 */

/**
 * How much ran at once: `cases` (case runs in flight) and `model_calls` (calls in flight
 * per model endpoint, by canonical model name; endpoints not listed use their backend's
 * default: the embedded model's slots, or the larger of 4 and `cases` for HTTP).
 * @typedef {Object} Concurrency
 * @property {number} [cases]
 * @property {Object<string, number>} [model_calls]
 */

/**
 * A message: a role (`user`, `model`) and its parts (genai's only fields: no extras).
 * @typedef {Object} Content
 * @property {string|null} [role]
 * @property {Array<Part>|null} [parts]
 */

/**
 * A conversation to simulate: the first user message verbatim, then a plan to follow.
 * @typedef {Object} ConversationScenario
 * @property {string} starting_prompt
 * @property {string} conversation_plan
 * @property {UserPersona|string|null} [user_persona]
 */

/**
 * Seconds behind `invocation_duration_v1`: total = model + tool + framework.
 * @typedef {Object} DurationDetails
 * @property {number|null} [total_seconds]
 * @property {number|null} [model_seconds]
 * @property {number|null} [tool_seconds]
 * @property {number|null} [framework_seconds]
 */

/**
 * Settings of one model endpoint (an HTTP backend; the embedded model has no network).
 *
 * `timeout`: seconds to wait for one reply; `attempts`: tries of one call, the first included,
 * for transient failures (timeouts, 429, 5xx, dropped connections; `Retry-After` honoured);
 * `give_up_after`: after this many calls in a row failed for good, the run stops asking the
 * endpoint and every later call fails at once with the last error, so a dead or hanging
 * endpoint costs at most a few timeouts, not one per question (None: never give up);
 * `requests_per_minute` / `tokens_per_minute`: a rate the run keeps to across everything that
 * calls the endpoint (tokens as the replies report them: prompt and completion);
 * `deterministic` (the embedded model only): byte-identical reruns on this machine, i.e. one
 * call at a time in one slot, no prompt-cache reuse (see `agenteval.models.local`).
 * @typedef {Object} EndpointOptions
 * @property {number} [timeout]
 * @property {number} [attempts]
 * @property {number|null} [give_up_after]
 * @property {number|null} [requests_per_minute]
 * @property {number|null} [tokens_per_minute]
 * @property {boolean} [deterministic]
 */

/**
 * One case: a static conversation (turns to replay and expected outputs) or a scenario.
 * @typedef {Object} EvalCase
 * @property {string} eval_id
 * @property {Array<Invocation>|null} [conversation]
 * @property {ConversationScenario|null} [conversation_scenario]
 * @property {SessionInput|null} [session_input]
 * @property {number} [creation_timestamp]
 * @property {Array<Rubric>|null} [rubrics]
 * @property {Object<string, *>|null} [final_session_state]
 */

/**
 * A case's final status, per-metric results, and per-invocation results.
 * @typedef {Object} EvalCaseResult
 * @property {string|null} [eval_set_file]
 * @property {string} [eval_set_id]
 * @property {string} [eval_id]
 * @property {EvalStatus} final_eval_status
 * @property {Array<*>|null} [eval_metric_results]
 * @property {Array<EvalMetricResult>} overall_eval_metric_results
 * @property {Array<EvalMetricResultPerInvocation>} eval_metric_result_per_invocation
 * @property {string} session_id
 * @property {Object<string, *>|null} [session_details]
 * @property {string|null} [user_id]
 * @property {string|null} [error_message]
 * @property {Array<MetricError>} [metric_errors]
 * @property {Array<MetricReason>} [reasons]
 * @property {Array<JudgeRecord>} [judge_records]
 * @property {Array<AgentVerdict>} [agent_verdicts]
 * @property {Array<JudgeCertificateNote>} [judge_certificates]
 * @property {number} [run_index]
 * @property {Array<string>} [warnings]
 * @property {Trace|null} [trace]
 */

/**
 * A metric's score and status for a case or an invocation.
 * @typedef {Object} EvalMetricResult
 * @property {string} metric_name
 * @property {number|null} [threshold]
 * @property {Object<string, *>|null} [criterion]
 * @property {string|null} [custom_function_path]
 * @property {number|null} [score]
 * @property {EvalStatus} eval_status
 * @property {EvalMetricResultDetails} [details]
 */

/**
 * Per-rubric scores and usage breakdowns attached to a metric result.
 * @typedef {Object} EvalMetricResultDetails
 * @property {Array<RubricScore>|null} [rubric_scores]
 * @property {TokenUsageDetails|null} [token_usage_details]
 * @property {DurationDetails|null} [duration_details]
 */

/**
 * Every metric's result for one actual invocation, beside the expected one.
 * @typedef {Object} EvalMetricResultPerInvocation
 * @property {Invocation} actual_invocation
 * @property {Invocation|null} [expected_invocation]
 * @property {Array<EvalMetricResult>} [eval_metric_results]
 */

/**
 * A named collection of eval cases.
 * @typedef {Object} EvalSet
 * @property {string} eval_set_id
 * @property {string|null} [name]
 * @property {string|null} [description]
 * @property {Array<EvalCase>} eval_cases
 * @property {number} [creation_timestamp]
 */

/**
 * An eval set a run covered: its id, the file it came from (None when built in memory),
 * the sha256 of that file's bytes (its version), and the selected case ids (None: all).
 * @typedef {Object} EvalSetRef
 * @property {string} eval_set_id
 * @property {string|null} [file]
 * @property {string|null} [sha256]
 * @property {Array<string>|null} [case_ids]
 * @property {number} [cases]
 */

/**
 * All case results of one run over one eval set.
 * @typedef {Object} EvalSetResult
 * @property {string} eval_set_result_id
 * @property {string|null} [eval_set_result_name]
 * @property {string} eval_set_id
 * @property {Array<EvalCaseResult>} [eval_case_results]
 * @property {number} [creation_timestamp]
 * @property {Array<CaseSummary>} [summary]
 * @property {string} [gating]
 * @property {RunSpec|null} [run]
 * @property {Object<string, *>} [metadata]
 */

/**
 * A tool call. `args` keeps the distinction between absent (None) and empty ({}).
 * @typedef {Object} FunctionCall
 * @property {string|null} [id]
 * @property {string|null} [name]
 * @property {Object<string, *>|null} [args]
 */

/**
 * The result of a tool call, paired with its call by `id` when ids are present.
 * @typedef {Object} FunctionResponse
 * @property {string|null} [id]
 * @property {string|null} [name]
 * @property {Object<string, *>|null} [response]
 */

/**
 * The legacy form: flat lists of tool uses, tool responses and sub-agent texts.
 * @typedef {Object} IntermediateData
 * @property {Array<FunctionCall>} [tool_uses]
 * @property {Array<FunctionResponse>} [tool_responses]
 * @property {Array<Array<*>>} [intermediate_responses]
 */

/**
 * One user turn: what the user said, what the agent finally answered, and how.
 * @typedef {Object} Invocation
 * @property {string} [invocation_id]
 * @property {Content} user_content
 * @property {Content|null} [final_response]
 * @property {IntermediateData|InvocationEvents|null} [intermediate_data]
 * @property {number} [creation_timestamp]
 * @property {number|null} [duration]
 * @property {number|null} [model_duration]
 * @property {number|null} [tool_duration]
 * @property {Array<Rubric>|null} [rubrics]
 * @property {AppDetails|null} [app_details]
 */

/**
 * One event inside an invocation: a model output, tool call or tool response.
 * @typedef {Object} InvocationEvent
 * @property {string} author
 * @property {Content|null} [content]
 * @property {Object<string, *>|null} [grounding_metadata]
 * @property {UsageMetadata|null} [usage_metadata]
 * @property {string|null} [model_version]
 */

/**
 * The current form: the invocation's events in order.
 * @typedef {Object} InvocationEvents
 * @property {Array<InvocationEvent>} [invocation_events]
 */

/**
 * The calibration certificate that applies to a judged criterion in this run (agenteval
 * extension; see `agenteval.criteria.judge.certificates`): `certified` (a certificate binds
 * this judge model, prompt and rubric, and meets the floors), `below_floor` (one applies,
 * under `min_kappa` / `min_agreement` / `min_labels`) or `uncalibrated` (none applies);
 * `advisory`: the criterion did not gate the case (`judge_certificates.require`).
 * `text` is what reports show beside the judged score.
 * @typedef {Object} JudgeCertificateNote
 * @property {string} metric_name
 * @property {"certified"|"below_floor"|"uncalibrated"} status
 * @property {string} text
 * @property {boolean} [advisory]
 * @property {string|null} [certificate]
 * @property {number|null} [kappa]
 * @property {number|null} [agreement]
 * @property {number|null} [coverage]
 * @property {number|null} [labels]
 */

/**
 * One judged question, kept for audit (agenteval extension): the question the judge saw
 * (after the system prompt and solved examples of `prompt_version`), each sample's raw reply
 * and reading, the voted verdict and its rationale.
 * @typedef {Object} JudgeRecord
 * @property {string} metric_name
 * @property {number|null} [invocation_index]
 * @property {string|null} [item]
 * @property {string} judge_model
 * @property {string|null} [step]
 * @property {string|null} [prompt_version]
 * @property {string} prompt
 * @property {Array<string>} [replies]
 * @property {Array<string|null>} [verdicts]
 * @property {string|null} [verdict]
 * @property {number|null} [score]
 * @property {string|null} [rationale]
 * @property {string|null} [error]
 * @property {number} [prompt_tokens]
 * @property {boolean} [cached]
 * @property {Array<string>} [screened]
 * @property {Array<string>} [flagged]
 * @property {string|null} [span_id]
 * @property {number|null} [confidence]
 * @property {"logprobs"|"samples"|null} [confidence_source]
 * @property {Object<string, number>|null} [label_probs]
 * @property {boolean} [uncertain]
 * @property {JudgeRecord|null} [escalated]
 */

/**
 * Why a metric could not be evaluated (agenteval extension: ADK drops the reason).
 * @typedef {Object} MetricError
 * @property {string} metric_name
 * @property {string} message
 * @property {number|null} [invocation_index]
 */

/**
 * Why a metric scored as it did, in words made by the criterion where it decided
 * (agenteval extension): for an invocation (`invocation_index`, 0-based) or, with
 * `invocation_index` None, for the whole case run (the overall result, naming the invocation
 * that decided it and the threshold it was held to).
 * @typedef {Object} MetricReason
 * @property {string} metric_name
 * @property {number|null} [invocation_index]
 * @property {string} reason
 */

/**
 * A criterion's results over the repeated runs of one case (agenteval extension).
 *
 * `mean`/`std` are over runs of the case-level score; `ci_low`/`ci_high` a 95% t-interval of
 * the mean; `pass_at_k`/`pass_pow_k` the chance that at least one / all of k runs drawn from
 * these would pass (k = number of runs).
 * @typedef {Object} MetricSummary
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
 */

/**
 * Every model the run used, by role (canonical model names; None when the role was not
 * played, e.g. no agent model for a re-scoring or an agent that brings its own).
 * @typedef {Object} ModelRoles
 * @property {string|null} [agent]
 * @property {Array<string>} [judge]
 * @property {string|null} [user_simulator]
 */

/**
 * One part of a message: text, a thought, a function call or response, or media.
 * @typedef {Object} Part
 * @property {string|null} [text]
 * @property {boolean|null} [thought]
 * @property {FunctionCall|null} [function_call]
 * @property {FunctionResponse|null} [function_response]
 * @property {Blob|null} [inline_data]
 */

/**
 * What a replayed run replayed (`agenteval eval --replay RUN`): the reference given, the
 * recorded run's id when its document has one, and what happened after a divergence.
 * @typedef {Object} ReplayInfo
 * @property {string} source
 * @property {string|null} [run_id]
 * @property {"stop"|"live"} [then]
 */

/**
 * One property to check.
 *
 * `type` decides which rubric criterion reads a case- or invocation-level rubric
 * (`FINAL_RESPONSE_QUALITY`, `TOOL_USE_QUALITY`, `TRAJECTORY_QUALITY`); rubrics inside
 * a criterion apply whatever their type.
 * @typedef {Object} Rubric
 * @property {string} rubric_id
 * @property {RubricContent} rubric_content
 * @property {string|null} [description]
 * @property {string|null} [type]
 */

/**
 * What a rubric asks for, as a property statement.
 * @typedef {Object} RubricContent
 * @property {string|null} [text_property]
 */

/**
 * A judge's score for one rubric (1.0 met, 0.0 not met, None undecided).
 * @typedef {Object} RubricScore
 * @property {string} rubric_id
 * @property {string|null} [rationale]
 * @property {number|null} [score]
 */

/**
 * The header of one run.
 * @typedef {Object} RunSpec
 * @property {string} run_id
 * @property {"eval"|"score"|"AgentEvaluator"|"pytest"|"web"|"api"} command
 * @property {Array<string>|null} [argv]
 * @property {Array<EvalSetRef>} [eval_sets]
 * @property {Object<string, *>} [config]
 * @property {string|null} [config_file]
 * @property {AgentInfo|null} [agent]
 * @property {string|null} [actual_file]
 * @property {ModelRoles} [models]
 * @property {Concurrency} [concurrency]
 * @property {Object<string, EndpointOptions>} [endpoints]
 * @property {number} [num_runs]
 * @property {string} [gating]
 * @property {string} [not_evaluated]
 * @property {string} [agenteval_version]
 * @property {number} [started]
 * @property {number|null} [ended]
 * @property {number|null} [duration_seconds]
 * @property {RunTotals} [totals]
 * @property {ReplayInfo|null} [replay]
 * @property {Object<string, Object<string, *>>|null} [pinned]
 */

/**
 * Totals over the whole run (every eval set).
 * @typedef {Object} RunTotals
 * @property {number} [cases]
 * @property {number} [case_runs]
 * @property {number} [passed]
 * @property {number} [failed]
 * @property {number} [not_evaluated]
 * @property {number} [agent_errors]
 * @property {number} [metric_errors]
 * @property {number|null} [agent_seconds]
 * @property {number|null} [agent_tokens]
 * @property {number} [judge_calls]
 * @property {number} [judge_prompt_tokens]
 * @property {number} [judge_uncertain]
 * @property {number} [judge_escalated]
 */

/**
 * The session a case starts from: app, user, optional pinned session id, initial state.
 * @typedef {Object} SessionInput
 * @property {string} app_name
 * @property {string} user_id
 * @property {string|null} [session_id]
 * @property {Object<string, *>} [state]
 */

/**
 * Cases of one eval set by verdict.
 * @typedef {Object} SetCounts
 * @property {number} total
 * @property {number} passed
 * @property {number} failed
 * @property {number} not_evaluated
 * @property {number} max_runs
 */

/**
 * One timed step. `start`/`end` are epoch seconds; `status` is `ok` unless the step
 * raised (`error`, with the exception's text).
 * @typedef {Object} Span
 * @property {string} span_id
 * @property {string|null} [parent_id]
 * @property {string} name
 * @property {"case"|"invocation"|"agent"|"llm"|"tool"|"user_simulator"|"scoring"|"judge"|"other"} [kind]
 * @property {number} start
 * @property {number|null} [end]
 * @property {"ok"|"error"} [status]
 * @property {string|null} [error]
 * @property {Object<string, string|number|boolean|Array<string>>} [attributes]
 * @property {Array<string>} [truncated]
 */

/**
 * Token counts behind `token_usage_v1`; None where no model call reported a count.
 * @typedef {Object} TokenUsageDetails
 * @property {number|null} [total_tokens]
 * @property {number|null} [input_tokens]
 * @property {number|null} [prompt_tokens]
 * @property {number|null} [cached_tokens]
 * @property {number|null} [tool_use_tokens]
 * @property {number|null} [output_tokens]
 * @property {number|null} [candidates_tokens]
 * @property {number|null} [reasoning_tokens]
 */

/**
 * The spans of one case run, in start order; `trace_id` is 32 hex digits.
 * @typedef {Object} Trace
 * @property {string} trace_id
 * @property {Array<Span>} [spans]
 */

/**
 * Token counts reported by one model call (genai's usage-metadata shape; its per-modality
 * details kept as extras, any other key refused: a mistyped count would read as none).
 * @typedef {Object} UsageMetadata
 * @property {number|null} [prompt_token_count]
 * @property {number|null} [candidates_token_count]
 * @property {number|null} [total_token_count]
 * @property {number|null} [cached_content_token_count]
 * @property {number|null} [tool_use_prompt_token_count]
 * @property {number|null} [thoughts_token_count]
 */

/**
 * One behaviour of a simulated user, with the rubrics that detect violations of it.
 * @typedef {Object} UserBehavior
 * @property {string} name
 * @property {string} description
 * @property {Array<string>} [behavior_instructions]
 * @property {Array<string>} [violation_rubrics]
 */

/**
 * A simulated user's persona.
 * @typedef {Object} UserPersona
 * @property {string} id
 * @property {string} description
 * @property {Array<UserBehavior>} [behaviors]
 */

export {};
