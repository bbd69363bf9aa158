// A mode's check report on its launcher card (docs/mode-authors.md, "Check a
// mode"): a "Check" button that runs `pneuma mode check NAME` through the
// launcher (pneuma/launcher/mode_check_routes.py) and shows ✓ or each failed
// check's name and message. Reports are kept per mode version by the
// launcher, so a reloaded page shows the last one at once. A check's message
// is the checker's own English line (as `pneuma mode check` prints it), shown
// as code; the words around it are translated.

import { html, useState, useEffect } from '../vendor/preact-htm.js';
import { t, localized } from './i18n.js';

let known = null; // one GET /api/modes/checks shared by every card of the page

function knownReports(api) {
  if (!known) known = api('/api/modes/checks').then((data) => data.reports || {}).catch(() => ({}));
  return known;
}

/** The failed results of a report, or [] when it passed. */
export function failedChecks(report) {
  return report && Array.isArray(report.results) ? report.results.filter((result) => !result.ok) : [];
}

/** `api(path, body)`: the launcher's JSON fetch (throws with .code and .message). */
export function ModeCheckReport({ api, mode }) {
  const [found, setFound] = useState(null);
  const [running, setRunning] = useState(false);
  const [problem, setProblem] = useState(null);

  useEffect(() => {
    let gone = false;
    knownReports(api).then((reports) => { if (!gone && reports[mode.name]) setFound(reports[mode.name]); });
    return () => { gone = true; };
  }, [mode.name]);

  async function run() {
    setRunning(true);
    setProblem(null);
    try {
      setFound(await api(`/api/modes/${encodeURIComponent(mode.name)}/check`, {}));
      known = null;
    } catch (error) {
      setProblem({ code: error.code, message: error.message });
    } finally {
      setRunning(false);
    }
  }

  const report = found && found.report;
  const failed = failedChecks(report);
  const name = mode.name;
  return html`<div class="ln-check" data-mode=${name}>
    <button type="button" class="ln-btn ln-check-run" onClick=${run} disabled=${running}
      aria-label=${t('launcher.check.label', { name: localized(mode.displayName) || name })}>
      ${running ? t('launcher.check.running') : t('launcher.check.button')}</button>
    ${report && report.ok && html`<p class="ln-check-ok" role="status">✓ ${t('launcher.check.passed', { count: report.results.length })}</p>`}
    ${report && !report.ok && html`<div class="ln-check-failed" role="status">
      <span>✗ ${t('launcher.check.failedHeading', { count: failed.length })}</span>
      <ul>${failed.map((result) => html`<li key=${result.check} data-check=${result.check}>
        <strong>${result.check}</strong> <code>${result.message}</code></li>`)}</ul>
    </div>`}
    ${problem && html`<p class="ln-problem" role="alert">${problem.code === 'E_BUSY'
      ? t('launcher.check.busy') : t('launcher.check.error', { message: problem.message })}</p>`}
  </div>`;
}
