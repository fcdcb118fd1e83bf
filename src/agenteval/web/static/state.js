/* What the page holds between views. */

export const S = {
  apps: [], // [{name, kind, error}]
  criteria: null, // GET /api/criteria, fetched once
  session: null, // the chat session shown (with turns)
  model: localStorage.getItem("agenteval.model") || "", // model for new sessions ("" = agent's own)
  sideTab: "sessions",
  route: 0, // bumped on every navigation; a slow view never paints over a newer one
};
