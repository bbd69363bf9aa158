// The launcher's "Add a mode" box: a source (a git URL at a ref, a folder,
// a wheel or sdist, a PyPI name) installed with pip by the launcher
// (pneuma/launcher/mode_install.py), its progress shown as pip works, the
// error in plain words when it fails. On success the launcher reloads its
// gallery, so the new mode's card appears without a page reload.

import { html, useState, useEffect, useRef } from '../vendor/preact-htm.js';
import { t } from './i18n.js';

const POLL_MS = 400;
const SHOWN_LINES = 6; // the last steps; pip's whole output is in the server's job

/** Ask the launcher for the install job until it is no longer running. */
async function follow(api, onJob, stopped) {
  for (;;) {
    const job = await api('/api/modes/install');
    if (stopped()) return null;
    onJob(job);
    if (job.state !== 'running') return job;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The box. `api(path, body)` is the launcher's JSON fetch (it throws an
 * error with `.code` and `.message`); `onInstalled(mode)` reloads the gallery. */
export function AddModeBox({ api, onInstalled }) {
  const [source, setSource] = useState('');
  const [job, setJob] = useState(null);
  const [problem, setProblem] = useState(null); // {code, message}: a refusal or a failed install
  const gone = useRef(false);
  const running = job && job.state === 'running';

  useEffect(() => {
    // An install started before this page loaded (another tab, a reload) is shown too.
    api('/api/modes/install').then((found) => {
      if (found.state === 'running') watch();
    }).catch(() => {});
    return () => { gone.current = true; };
  }, []);

  async function watch() {
    const last = await follow(api, setJob, () => gone.current);
    if (!last) return;
    if (last.state === 'failed') setProblem(last.error);
    if (last.state === 'done') onInstalled(last.mode);
  }

  async function add(event, check) {
    if (event) event.preventDefault();
    if (!source.trim() || running) return;
    setProblem(null);
    try {
      setJob(await api('/api/modes/install', check === false ? { source, check } : { source }));
    } catch (error) {
      setProblem({ code: error.code, message: error.message });
      return;
    }
    watch().catch((error) => setProblem({ code: error.code, message: error.message }));
  }

  const lines = job ? job.lines.slice(-SHOWN_LINES) : [];
  const done = job && job.state === 'done' && job.mode;
  return html`<form class="ln-add" onSubmit=${add} aria-labelledby="ln-add-h">
    <h3 id="ln-add-h">${t('launcher.add.heading')}</h3>
    <div class="ln-add-row">
      <input id="ln-add-source" type="text" value=${source} spellcheck=${false} autocomplete="off"
        aria-label=${t('launcher.add.label')} placeholder=${t('launcher.add.placeholder')}
        aria-describedby="ln-add-help" onInput=${(e) => setSource(e.target.value)} disabled=${running} />
      <button type="submit" class="ln-btn ln-btn-primary" disabled=${running || !source.trim()}>
        ${running ? t('launcher.add.installing') : t('launcher.add.button')}</button>
    </div>
    <span class="ln-help" id="ln-add-help">${t('launcher.add.hint')}</span>
    ${(running || (job && lines.length && !done)) && html`<ol class="ln-add-progress" aria-live="polite">
      ${lines.map((line, i) => html`<li key=${i}><code>${line}</code></li>`)}</ol>`}
    ${done && html`<p class="ln-add-done" role="status">${t('launcher.add.done', { name: job.mode.name, version: job.mode.version })}</p>`}
    ${problem && html`<div class="ln-problem ln-add-problem" role="alert">
      <span>${problem.code === 'E_BUSY' ? t('launcher.add.busy') : t('launcher.add.failed', { message: problem.message })}</span>
      ${problem.code === 'E_CHECK_FAILED' && html` <button type="button" class="ln-btn"
        onClick=${() => add(null, false)}>${t('launcher.add.anyway')}</button>`}
    </div>`}
  </form>`;
}
