/* What the page holds between views. */

/**
 * @typedef {Object} PageState
 * @property {Array<AppInfo>} apps - GET /api/apps
 * @property {Array<CriterionInfo>|null} criteria - GET /api/criteria, fetched once
 * @property {SessionView|null} session - the chat session shown (with turns)
 * @property {string} model - model for new sessions ("" = the agent's own)
 * @property {string} sideTab - the sidebar's tab
 * @property {number} route - bumped on every navigation
 */

/** @type {PageState} */
export const S = {
  apps: [],
  criteria: null,
  session: null,
  model: localStorage.getItem("agenteval.model") || "", // model for new sessions ("" = agent's own)
  sideTab: "sessions",
  route: 0, // bumped on every navigation; a slow view never paints over a newer one
};
