// Check, Install and Package: the maker's buttons and the agent's actions
// call the same routes (routes.py), one job at a time. Each answer is kept
// for describe-view; a failure is the server's message in plain words.

import { fetchJson } from "/static/lib/viewer-helpers.js";

const ROUTES = { check: "/api/mode-maker/check", install: "/api/mode-maker/install", package: "/api/mode-maker/package" };

export class Jobs {
  constructor(onChange) {
    this.onChange = onChange; // (jobs) => void, after every start and end
    this.running = null;
    this.last = {}; // kind -> {ok, answer | error}
  }

  /** Run job `kind`; resolves to {ok, answer} or {ok: false, error: {code, message, details}}. */
  async run(kind, body = {}) {
    if (this.running) {
      return { ok: false, error: { code: "E_BUSY", message: `${this.running} is still running; try again when it ends`, details: {} } };
    }
    this.running = kind;
    this.onChange(this);
    let outcome;
    try {
      const answer = await fetchJson(ROUTES[kind], { method: "POST", json: body });
      outcome = { ok: true, answer };
    } catch (error) {
      outcome = { ok: false, error: { code: error.code || "E_UNAVAILABLE", message: String(error.message), details: error.details || {}, hint: error.hint || null } };
    } finally {
      this.running = null;
    }
    this.last[kind] = outcome;
    this.onChange(this);
    return outcome;
  }
}

/** The failed checks of a check's report: [{check, message}]. */
export function failedChecks(report) {
  return (report?.results || []).filter((r) => !r.ok).map((r) => ({ check: String(r.check), message: String(r.message) }));
}

/** A job's outcome in English for the agent: one line per failure. */
export function describeOutcome(kind, outcome) {
  if (!outcome) return `${kind}: not run yet`;
  if (!outcome.ok) {
    const failures = failedChecks({ results: outcome.error.details?.results });
    const lines = failures.map((f) => `  ✗ ${f.check}: ${f.message}`);
    return [`${kind} failed (${outcome.error.code}): ${outcome.error.message}`, ...lines].join("\n");
  }
  if (kind === "check") {
    const failures = failedChecks(outcome.answer);
    const total = (outcome.answer?.results || []).length;
    if (!failures.length) return `check: every check passed (${total})`;
    return [`check: ${failures.length} of ${total} checks failed`, ...failures.map((f) => `  ✗ ${f.check}: ${f.message}`)].join("\n");
  }
  if (kind === "install") {
    const a = outcome.answer;
    return `install: ${a.name} ${a.version} installed (editable: ${a.editable}); pneuma run --mode ${a.name} works now`;
  }
  return `package: wheel written to ${outcome.answer.wheel}`;
}
