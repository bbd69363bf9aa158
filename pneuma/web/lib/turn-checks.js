// The checks after every turn in the chat (docs/checks.md).
//
// When a turn ends the server runs the mode's checks on the files it
// changed and says how it went (`turn_checked`: passed, failed with its
// problems, or the checks could not run), kept with the conversation so a
// reload shows it again. Under the user message of that turn: a badge,
// "Checks passed" or "2 problems", which opens the list; each problem opens
// its spot in the viewer (navigate-to with its `locate`, else its file).
//
// A failed turn may get one repair turn (`turn_repair`): announced with a
// countdown and Cancel, held while the person types (this module tells the
// server whether the composer holds text: POST /api/turn-checks/composer),
// then sent as a message of its own. The workspace's "repair" setting is
// a switch in the badge's list (PUT /api/turn-checks/settings).

import { html, useState, useEffect } from '../vendor/preact-htm.js';
import { fetchJson } from './viewer-helpers.js';
import { t } from './i18n.js';
import { ui } from './shell-state.js';
import { HEADLESS } from './headless-client.js';

const checkedByKey = new Map(); // turn key -> the turn_checked message
const repairByKey = new Map(); // turn key -> the newest turn_repair message of that turn
const settings = { repair: true, loaded: false };
const COMPOSER_POLL_MS = 1000;

function keysOf(message) {
  const keys = [];
  if (message.client_msg_id) keys.push(`c:${message.client_msg_id}`);
  if (message.user_timestamp != null) keys.push(`t:${message.user_timestamp}`);
  return keys;
}

function itemKeys(item) {
  const keys = [];
  if (item.clientId) keys.push(`c:${item.clientId}`);
  if (typeof item.timestamp === 'number') keys.push(`t:${item.timestamp}`);
  return keys;
}

function learn(message) {
  if (message.type === 'turn_checked') {
    for (const key of keysOf(message)) checkedByKey.set(key, message);
    return true;
  }
  if (message.type === 'turn_repair') {
    for (const key of keysOf(message)) repairByKey.set(key, message);
    return true;
  }
  if (message.type === 'turn_checks_settings') {
    settings.repair = !!message.repair;
    return true;
  }
  return false;
}

function found(map, item) {
  for (const key of itemKeys(item)) {
    const value = map.get(key);
    if (value) return value;
  }
  return null;
}

// --- the composer: is the person typing? --------------------------------------

let composerHasText = false;
let lastSent = null;
let lastTypedSent = 0;

function composerText() {
  const box = document.querySelector('.composer textarea');
  return box ? box.value : '';
}

function tellComposer(force = false) {
  const hasText = composerText().trim() !== '';
  composerHasText = hasText;
  const now = Date.now();
  // Typing: at most once a second; a change between empty and not: at once.
  if (!force && hasText === lastSent && now - lastTypedSent < COMPOSER_POLL_MS) return;
  lastSent = hasText;
  lastTypedSent = now;
  fetchJson('/api/turn-checks/composer', { method: 'POST', json: { hasText } }).catch(() => {});
}

function watchComposer() {
  document.addEventListener('input', (event) => {
    if (event.target && event.target.matches && event.target.matches('.composer textarea')) tellComposer();
  }, true);
  // Sent or cleared without an input event (the draft restored, the message sent).
  setInterval(() => {
    const hasText = composerText().trim() !== '';
    if (hasText !== composerHasText || (lastSent !== null && hasText !== lastSent)) tellComposer(true);
  }, COMPOSER_POLL_MS);
}

export const turnChecks = {
  started: false,

  /** Once, when the page starts: the workspace's setting, and the composer watch. */
  start() {
    if (this.started) return;
    this.started = true;
    fetchJson('/api/turn-checks').then((body) => {
      settings.repair = !!body.repair;
      settings.loaded = true;
    }).catch(() => {});
    if (!HEADLESS) watchComposer();
  },

  /** A socket message the store has just applied. */
  receive(store, message) {
    const replaces = message.type === 'message_history' || message.type === 'conversation_switched';
    if (replaces || message.type === 'history_page') {
      if (replaces) {
        checkedByKey.clear();
        repairByKey.clear();
      }
      let any = false;
      for (const m of message.messages || []) any = learn(m) || any;
      if (any) store.notify();
      return;
    }
    if (learn(message)) store.notify();
  },
};

// --- the badge ----------------------------------------------------------------

/** The problem's spot: the viewer's navigate-to with its locate, else its file. */
async function showProblem(problem) {
  const host = ui.host;
  if (!host) return;
  const locate = problem.locate || (problem.file ? { file: problem.file } : null);
  if (!locate) return;
  const result = await host.runAction('navigate-to', { ...locate });
  if (!result.success && typeof problem.file === 'string') await host.reveal(problem.file);
}

function where(problem) {
  if (!problem.file) return '';
  return problem.line ? `${problem.file}:${problem.line}` : problem.file;
}

function ProblemList({ checked }) {
  const [problem, setProblem] = useState(null);
  const more = (checked.problemCount || 0) - (checked.problems || []).length;
  const failedChecks = (checked.checks || []).filter((c) => c.error);
  return html`<div class="turn-checks-panel">
    <ul class="turn-checks-problems">${(checked.problems || []).map((p, i) => html`<li key=${i}
        class=${`turn-check-problem ${p.severity}`} data-file=${p.file || ''} data-line=${p.line || ''}>
      <button class="link turn-check-open" title=${t('turnChecks.openTitle')}
        onClick=${() => showProblem(p).catch((error) => setProblem(error.message))}>${where(p) || t('turnChecks.noFile')}</button>
      <span class="turn-check-message">${p.message}</span>
    </li>`)}
    ${more > 0 && html`<li class="muted">${t('turnChecks.more', { count: more })}</li>`}
    ${failedChecks.map((c) => html`<li key=${c.check} class="turn-check-error">${t('turnChecks.checkError', { check: c.check, error: c.error })}</li>`)}
    </ul>
    ${problem && html`<div class="notice-hint" role="alert">${problem}</div>`}
    <${RepairSwitch} />
  </div>`;
}

function RepairSwitch() {
  const [, redraw] = useState(0);
  const [problem, setProblem] = useState(null);
  const change = async (on) => {
    setProblem(null);
    try {
      const body = await fetchJson('/api/turn-checks/settings', { method: 'PUT', json: { repair: on } });
      settings.repair = !!body.repair;
    } catch (error) {
      setProblem(error.message);
    }
    redraw((n) => n + 1);
  };
  return html`<label class="turn-checks-repair-switch">
    <input type="checkbox" role="switch" checked=${settings.repair} onChange=${(e) => change(e.target.checked)} />
    <span>${t('turnChecks.repairSetting')}</span>
    ${problem && html`<span class="notice-hint" role="alert">${problem}</span>`}
  </label>`;
}

function secondsLeft(repair, since) {
  const total = Number(repair.seconds) || 0;
  return Math.max(0, Math.ceil(total - (Date.now() - since) / 1000));
}

function RepairNotice({ repair }) {
  const [since] = useState(() => Date.now());
  const [, tick] = useState(0);
  const [problem, setProblem] = useState(null);
  const live = repair.state === 'pending' || repair.state === 'waiting';
  useEffect(() => {
    if (!live) return undefined;
    const timer = setInterval(() => tick((n) => n + 1), 250);
    return () => clearInterval(timer);
  }, [live, repair.id]);
  const cancel = async () => {
    try {
      await fetchJson(`/api/turn-checks/repair/${encodeURIComponent(repair.id)}/cancel`, { method: 'POST', json: {} });
    } catch (error) {
      setProblem(error.message);
    }
  };
  let text;
  if (repair.state === 'pending') text = t('turnChecks.repairPending', { seconds: secondsLeft(repair, since) });
  else if (repair.state === 'waiting') text = t('turnChecks.repairWaiting');
  else if (repair.state === 'sent') text = t('turnChecks.repairSent');
  else if (repair.state === 'cancelled') text = t('turnChecks.repairCancelled');
  else text = t('turnChecks.repairDropped');
  return html`<div class=${`turn-checks-repair ${repair.state}`} data-repair=${repair.id} data-state=${repair.state}>
    <span>${text}</span>
    ${live && html`<button class="btn turn-checks-repair-cancel" onClick=${cancel}>${t('turnChecks.repairCancel')}</button>`}
    ${problem && html`<span class="notice-hint" role="alert">${problem}</span>`}
  </div>`;
}

/** Above a repair turn's message: that Pneuma sent it, not the person. */
export function RepairLabel({ item }) {
  if (!String(item.clientId || '').startsWith('repair-')) return null;
  return html`<div class="ctx-chip small turn-checks-repair-label" title=${t('turnChecks.repairLabelTitle')}>${t('turnChecks.repairLabel')}</div>`;
}

/** Under a user message: its turn's checks, and its repair turn if any. */
export function TurnChecksBadge({ item }) {
  const [open, setOpen] = useState(false);
  const checked = found(checkedByKey, item);
  if (!checked) return null;
  const repair = found(repairByKey, item);
  const count = checked.problemCount || 0;
  const first = checked.status === 'failed' ? (checked.problems || []).find((p) => p.severity === 'error') : null;
  const label = checked.status === 'passed' ? t('turnChecks.passed')
    : checked.status === 'failed' ? t('turnChecks.problems', { count })
      : t('turnChecks.error');
  return html`<div class="turn-checks" data-status=${checked.status} data-ref=${checked.ref || ''}>
    <button class=${`turn-checks-badge ${checked.status}${open ? ' open' : ''}`} aria-expanded=${open}
      title=${t('turnChecks.badgeTitle')} onClick=${() => setOpen(!open)}>
      <span class="turn-checks-mark" aria-hidden="true">${checked.status === 'passed' ? '✓' : '!'}</span>${label}
      ${first && where(first) && html`<span class="turn-checks-where">${where(first)}</span>`}
    </button>
    ${open && html`<${ProblemList} checked=${checked} />`}
    ${repair && html`<${RepairNotice} key=${repair.id} repair=${repair} />`}
  </div>`;
}
