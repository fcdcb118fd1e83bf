/* The web API's types, generated from its OpenAPI schema (GET /openapi.json) by
 * agenteval.web.openapi: do not edit; regenerate with
 * `AGENTEVAL_WRITE_TYPES=1 python -m pytest tests/web/test_contract.py`.
 * The page's modules name them in @type and @param annotations, and tests/web/test_contract.py
 * checks that they read only the fields listed here. */

/**
 * A case of a run matching a search, with what it was sorted by.
 * @typedef {Object} CaseHit
 * @property {number} position - Its place in the run (case order, from 0).
 * @property {string} eval_id - The case.
 * @property {"passed"|"failed"|"not_evaluated"|"informational"} status - Its verdict over runs.
 * @property {number|null} score - The mean of its gating criteria's means (None: nothing scored).
 * @property {number|null} seconds - The agent's seconds over its runs.
 * @property {number|null} tokens - The agent's tokens over its runs.
 * @property {Array<string>} failing - Its failing (or not evaluated) gating criteria.
 * @property {Array<string>} tools - The tools it called.
 * @property {Array<string>} errors - Its error types (`TimeoutError`, `<criterion> error`).
 */

/**
 * One page of a run's cases matching a search, and what the run can be filtered by.
 * @typedef {Object} CaseSearch
 * @property {number} total - Cases matching (over every page).
 * @property {Array<CaseHit>} cases - This page, in the order asked for.
 * @property {Array<string>} criteria - Every criterion failing somewhere in the run.
 * @property {Array<string>} tools - Every tool called in the run.
 * @property {Array<string>} arguments - Every tool argument (`tool.arg`) passed in the run.
 * @property {Array<string>} errors - Every error type in the run.
 */

/**
 * Failing cases sharing one reason (`12 cases: `lookup.q` differs`).
 * @typedef {Object} FailureGroupView
 * @property {string} reason - What failed, the same words for every case it applies to.
 * @property {Array<string>} eval_ids - The cases, in case order.
 */

/**
 * A case whose verdicts both passed and failed across the history.
 * @typedef {Object} FlakyView
 * @property {string} eval_set_id - Its eval set.
 * @property {string} eval_id - The case.
 * @property {number} runs - Case runs seen (every stored run and its repeats).
 * @property {number} passed - Of which passed.
 * @property {number} pass_rate - passed / runs.
 * @property {number} flip_rate - The share of consecutive verdicts that differ.
 * @property {number} stored_runs - Stored runs the case appears in.
 */

/**
 * One case in one run of the matrix.
 * @typedef {Object} MatrixCellView
 * @property {"passed"|"failed"|"not_evaluated"|"informational"} status - Its verdict.
 * @property {number|null} score - The mean of its gating criteria's means.
 * @property {Array<string>} answer - Each invocation's final response (in the column's case run).
 * @property {Array<string>} calls - Its tool calls, `name(arg=value)`.
 * @property {boolean} changed - Whether answer or calls differ from the cell to the left.
 * @property {Array<string>} diff - The line diff against the cell to the left (`- `, `+ `, ` ` lines; calls as `call …`).
 * @property {string|null} error - The agent's error when the case run ended in one.
 */

/**
 * A run of the matrix.
 * @typedef {Object} MatrixColumn
 * @property {string} run_id - The run's document id.
 * @property {string} label - The run id the CLI printed (else the document id), with its agent model if any.
 * @property {number} created - When it ran (epoch seconds).
 * @property {number} [run_index] - Which of the run's repeats this column shows.
 * @property {number} [run_indices] - How many repeats the run has (1: not repeated; more: a column per repeat, or one picked).
 */

/**
 * One eval id across the runs.
 * @typedef {Object} MatrixRowView
 * @property {string} eval_id - The case.
 * @property {boolean} changed - Whether any cell changed against its left neighbour.
 * @property {Array<MatrixCellView|null>} cells - One per column (None: that run lacks the case).
 */

/**
 * Runs side by side: cases as rows, runs (a column per repeat of a repeated run) as columns.
 * @typedef {Object} MatrixView
 * @property {Array<MatrixColumn>} columns - The runs, in the order asked for, each repeated one's run indices in order.
 * @property {number} total - Rows before paging (after `changed_only`).
 * @property {Array<MatrixRowView>} rows - This page of rows.
 */

/**
 * A person's review of a verdict (PUT body).
 * @typedef {Object} ReviewBody
 * @property {string} eval_id - The case.
 * @property {number} [run_index] - Which of its runs.
 * @property {string} [target] - "" for the case's verdict, else the judged criterion's name.
 * @property {"agree"|"disagree"} agreement - Whether the reviewer agrees with the verdict (`disagree`: the judge was wrong).
 * @property {string} [comment] - Why.
 * @property {string|null} [reviewer] - Who (free text).
 */

/**
 * A stored review.
 * @typedef {Object} ReviewView
 * @property {string} eval_id - The case.
 * @property {number} [run_index] - Which of its runs.
 * @property {string} [target] - "" for the case's verdict, else the judged criterion's name.
 * @property {"agree"|"disagree"} agreement - Whether the reviewer agrees with the verdict (`disagree`: the judge was wrong).
 * @property {string} [comment] - Why.
 * @property {string|null} [reviewer] - Who (free text).
 * @property {string} run_id - The run's document id.
 * @property {number} created - When it was stored (epoch seconds).
 */

/**
 * A tool the agent declares (read from the agent object, not from a run).
 * @typedef {Object} ToolInfo
 * @property {string} name - The tool's name, as calls name it.
 * @property {string} description - Its description.
 * @property {Array<ToolParamView>} params - Its arguments, in declaration order.
 * @property {string} agent - The agent (or sub-agent) declaring it.
 */

/**
 * An argument of a declared tool.
 * @typedef {Object} ToolParamView
 * @property {string} name - The argument's name.
 * @property {string} type - Its JSON schema type (`string`, `integer`, …; `any` when none is declared).
 * @property {boolean} required - Whether a call must pass it.
 * @property {string} description - What the tool's docstring says of it.
 * @property {Object<string, *>} [json_schema] - Its JSON schema, for typed inputs: `type` (lower case), `enum`, `items`, `properties` and `required` of an object, bounds (`agents.declared.json_schema`).
 */

export {};
