// The launcher: the installed modes, the recent workspaces, the sessions
// this process serves. Its JSON API is pneuma/launcher/app.py; opening a
// workspace goes to that workspace's own page (its own port and token),
// in this tab: the launcher is one Back away, and its list says what runs.

import { explainProblem } from './lib/problem-box.js';
import { t, initI18n, ready, getLocale, onLocaleChange, localized, formatNumber } from './lib/i18n.js';

const root = document.getElementById('app');
const EXAMPLE_COMMAND = 'pneuma run --mode doc -w ~/notes'; // a command, the same in every language
const REFRESH_MS = 4000; // the list shows what runs now: sessions start and stop elsewhere too
// A stopped workspace's tab links here with ?reopen=<its folder> (lib/stopped.js):
// its row is shown and its Open focused, never opened without a click.
const REOPEN = new URLSearchParams(location.search).get('reopen');

let html;
let LanguageSwitch;
let AddModeBox; // lib/mode-add.js: the "Add a mode" box
let ModeCheckReport; // lib/mode-check-report.js: a mode's check report on its card
let glyphsFor;
let render;
let useState;
let useEffect;
let useRef;

// --- talking to the launcher -------------------------------------------------

class ApiError extends Error {
  constructor(status, error) {
    super(error && error.message ? error.message : `HTTP ${status}`);
    this.status = status;
    this.code = error && error.code;
    this.details = (error && error.details) || {};
  }
}

async function api(path, body) {
  const options = body === undefined ? { cache: 'no-store' } : {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  };
  const response = await fetch(path, options);
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) throw new ApiError(response.status, data && data.error);
  return data;
}

// Reasons the launcher gives (details.reason) in the person's language;
// anything else shows the server's own message.
const REASONS = {
  not_empty: 'launcher.error.notEmpty',
  special_folder: 'launcher.error.specialFolder',
  relative: 'launcher.error.relative',
  required: 'launcher.error.required',
  type: 'launcher.error.type',
  missing: 'launcher.error.missing',
  not_a_workspace: 'launcher.error.notWorkspace',
  not_a_folder: 'launcher.error.notFolder',
  served_elsewhere: 'launcher.error.servedElsewhere',
  system_folder: 'launcher.error.systemFolder',
  not_owned: 'launcher.error.notOwned',
  nul: 'launcher.error.badPath',
  not_unicode: 'launcher.error.badPath',
  too_long: 'launcher.error.badPath',
};

function explainError(error, mode) {
  const key = error instanceof ApiError ? REASONS[error.details.reason] : undefined;
  if (key) return t(key, { mode: mode || '' });
  if (error instanceof ApiError) return t('launcher.error.failed', { message: error.message });
  return t('launcher.error.unreachable');
}

// --- formatting --------------------------------------------------------------

const TIME_UNITS = [['year', 31557600], ['month', 2629800], ['week', 604800], ['day', 86400], ['hour', 3600], ['minute', 60], ['second', 1]];

/** "3 minutes ago", "昨天": the largest unit that fits, in the page's language. */
function relativeTime(seconds) {
  if (typeof seconds !== 'number') return '';
  const diff = seconds - Date.now() / 1000;
  const format = new Intl.RelativeTimeFormat(getLocale(), { numeric: 'auto' });
  for (const [unit, size] of TIME_UNITS) {
    if (Math.abs(diff) >= size || unit === 'second') return format.format(Math.round(diff / size), unit);
  }
  return '';
}

function absoluteTime(seconds) {
  if (typeof seconds !== 'number') return '';
  return new Date(seconds * 1000).toLocaleString(getLocale());
}

function formatBytes(bytes) {
  const units = ['byte', 'kilobyte', 'megabyte', 'gigabyte'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return formatNumber(value, { style: 'unit', unit: units[unit], unitDisplay: unit === 0 ? 'long' : 'short', maximumFractionDigits: value < 10 && unit > 0 ? 1 : 0 });
}

function folderName(path) {
  return path.split('/').filter(Boolean).pop() || path;
}

function modeLabel(modes, name) {
  const mode = modes.find((m) => m.name === name);
  return mode ? localized(mode.displayName) || name : name;
}

// --- the page ----------------------------------------------------------------


function ModeIcon({ mode, size = 40 }) {
  if (mode && mode.icon) {
    return html`<span class="ln-icon" style=${`width:${size}px;height:${size}px`}><img src=${mode.icon} alt="" width=${size * 0.6} height=${size * 0.6} /></span>`;
  }
  const letter = mode ? (localized(mode.displayName) || mode.name).slice(0, 1).toUpperCase() : '?';
  return html`<span class="ln-icon ln-icon-letter" style=${`width:${size}px;height:${size}px`} aria-hidden="true">${letter}</span>`;
}

function ModeCard({ mode, onNew }) {
  const name = localized(mode.displayName) || mode.name;
  // Where an added mode came from, as typed to add it (pneuma mode add), and its exact version.
  const source = mode.source.builtIn ? t('launcher.mode.builtIn') : t('launcher.mode.from', { distribution: mode.source.from || mode.source.distribution || mode.source.plugin });
  const version = mode.source.builtIn ? mode.version : `${mode.source.version || mode.version}${mode.source.commit ? ` @${mode.source.commit.slice(0, 10)}` : ''}`;
  // The check report sits under the card, not in it: a button holds no button.
  return html`<div class="ln-card-cell"><button class="ln-card" data-mode=${mode.name} onClick=${() => onNew(mode)} aria-label=${t('launcher.mode.newLabel', { name })}>
    <div class="ln-card-head">
      <${ModeIcon} mode=${mode} />
      <div class="ln-card-title">
        <span class="ln-card-name">${name}</span>
        <span class="ln-card-meta"><span class="ln-badge" title=${source}>${source}</span><span class="ln-version">${t('launcher.mode.version', { version })}</span></span>
      </div>
    </div>
    <p class="ln-card-desc">${localized(mode.description)}</p>
    <span class="ln-card-action">${t('launcher.mode.new')} <span aria-hidden="true">→</span></span>
  </button><${ModeCheckReport} api=${api} mode=${mode} /></div>`;
}

function FailedPlugins({ errors }) {
  if (!errors.length) return null;
  return html`<section class="ln-failed" aria-labelledby="ln-failed-h">
    <h2 id="ln-failed-h">${t('launcher.failed.heading')}</h2>
    <ul>${errors.map((e) => html`<li key=${e.plugin}>
      <span class="ln-failed-name">${e.plugin}${e.distribution ? html` <span class="muted">(${e.distribution})</span>` : ''}</span>
      <code class="plugin-error">${e.error}</code></li>`)}</ul>
  </section>`;
}

function Sessions({ sessions, modes, onStop, busy }) {
  if (!sessions.length) return null;
  return html`<section class="ln-section" aria-labelledby="ln-sessions-h">
    <div class="ln-section-head"><h2 id="ln-sessions-h">${t('launcher.sessions.heading')}</h2></div>
    <ul class="ln-sessions">${sessions.map((s) => html`<li key=${s.path} class="ln-session" data-path=${s.path}>
      <span class="ln-dot" aria-hidden="true"></span>
      <div class="ln-session-main">
        <span class="ln-ws-name">${folderName(s.path)}</span>
        <span class="ln-path" title=${s.path}>${s.path}</span>
      </div>
      <span class="ln-chip">${modeLabel(modes, s.mode)}</span>
      <span class="muted ln-when" title=${absoluteTime(s.startedAt)}>${t('launcher.sessions.started', { when: relativeTime(s.startedAt) })}</span>
      <div class="ln-actions">
        <a class="ln-btn ln-btn-primary" href=${s.url}>${t('launcher.open')}</a>
        <button class="ln-btn" disabled=${busy === s.path} onClick=${() => onStop(s)}>${t('launcher.stop')}</button>
      </div>
    </li>`)}</ul>
  </section>`;
}

function ServedBadge({ workspace }) {
  if (workspace.missing) return html`<span class="ln-status ln-status-missing">${t('launcher.recent.missing')}</span>`;
  const served = workspace.served;
  if (!served) return null;
  if (served.by === 'launcher') return html`<span class="ln-status ln-status-here">${t('launcher.recent.runningHere')}</span>`;
  return html`<span class="ln-status ln-status-other" title=${t('launcher.recent.runningOtherHint', { pid: served.pid ?? '?' })}>${t('launcher.recent.runningOther')}</span>`;
}

function LastMessage({ message }) {
  if (!message) return html`<span class="ln-last muted">${t('launcher.recent.noMessages')}</span>`;
  const who = message.role === 'user' ? t('launcher.recent.you') : t('launcher.recent.agent');
  return html`<span class="ln-last"><span class="ln-who">${who}</span> <span class="ln-last-text">${message.text}</span></span>`;
}

function Size({ size }) {
  if (!size) return null;
  const text = formatBytes(size.bytes);
  const files = t('launcher.recent.files', { count: size.files });
  return html`<span class="ln-size">${size.complete ? text : t('launcher.recent.atLeast', { size: text })} · ${files}</span>`;
}

function Workspaces({ workspaces, modes, query, setQuery, onOpen, onForget, busy, loaded, reopen }) {
  const inputRef = useRef(null);
  return html`<section class="ln-section" aria-labelledby="ln-recent-h">
    <div class="ln-section-head">
      <h2 id="ln-recent-h">${t('launcher.recent.heading')}</h2>
      <label class="ln-search">
        <svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true"><circle cx="11" cy="11" r="7" fill="none" stroke="currentColor" stroke-width="2"/><path d="m20 20-3.5-3.5" stroke="currentColor" stroke-width="2" stroke-linecap="round"/></svg>
        <input ref=${inputRef} type="search" value=${query} placeholder=${t('launcher.recent.search')} aria-label=${t('launcher.recent.search')}
          onInput=${(e) => setQuery(e.target.value)} onKeyDown=${(e) => { if (e.key === 'Escape') setQuery(''); }} />
      </label>
    </div>
    ${loaded && !workspaces.length && html`<div class="ln-empty">${query ? t('launcher.recent.noMatch', { query }) : html`
      <p>${t('launcher.recent.empty')}</p><code>${EXAMPLE_COMMAND}</code>`}</div>`}
    <ul class="ln-list">${workspaces.map((w) => {
      const mode = modes.find((m) => m.name === w.mode);
      const when = w.lastActivity || w.openedAt;
      const openable = !w.missing && !(w.served && w.served.by === 'other' && !w.served.url);
      return html`<li key=${w.path} class=${`ln-row${w.missing ? ' is-missing' : ''}${w.path === reopen ? ' is-reopen' : ''}`} data-path=${w.path}>
        <${ModeIcon} mode=${mode} size=${36} />
        <div class="ln-row-main">
          <div class="ln-row-top">
            <span class="ln-ws-name">${folderName(w.path)}</span>
            <span class="ln-chip">${modeLabel(modes, w.mode)}</span>
            <${ServedBadge} workspace=${w} />
          </div>
          <span class="ln-path" title=${w.path}>${w.path}</span>
          <${LastMessage} message=${w.lastMessage} />
        </div>
        <div class="ln-row-side">
          <span class="ln-when" title=${absoluteTime(when)}>${relativeTime(when)}</span>
          <${Size} size=${w.size} />
        </div>
        <div class="ln-actions">
          <button class="ln-btn ln-btn-primary" disabled=${!openable || busy === w.path} onClick=${() => onOpen(w)}>
            ${busy === w.path ? t('launcher.opening') : t('launcher.open')}</button>
          <button class="ln-btn ln-btn-quiet" title=${t('launcher.recent.forgetHint')} onClick=${() => onForget(w)}>${t('launcher.recent.forget')}</button>
        </div>
      </li>`;
    })}</ul>
  </section>`;
}

function ParamField({ param, value, onChange, error }) {
  const id = `ln-param-${param.name}`;
  const label = localized(param.label) || param.name;
  const help = localized(param.description);
  let input;
  if (param.type === 'select') {
    input = html`<select id=${id} name=${param.name} value=${value} onChange=${(e) => onChange(e.target.value)} aria-invalid=${!!error}>
      ${param.options.map((option) => html`<option key=${option} value=${option}>${option}</option>`)}</select>`;
  } else {
    const type = param.sensitive ? 'password' : param.type === 'number' ? 'number' : 'text';
    input = html`<input id=${id} name=${param.name} type=${type} value=${value} step=${param.type === 'number' ? 'any' : undefined}
      required=${param.required} autocomplete=${param.sensitive ? 'new-password' : 'off'} aria-invalid=${!!error}
      aria-describedby=${help ? `${id}-help` : undefined} onInput=${(e) => onChange(e.target.value)} />`;
  }
  return html`<div class="ln-field">
    <label for=${id}>${label}${param.required ? html` <span class="ln-required">${t('launcher.new.required')}</span>` : ''}</label>
    ${input}
    ${help && html`<span class="ln-help" id=${`${id}-help`}>${help}</span>`}
    ${error && html`<span class="ln-field-error" role="alert">${error}</span>`}
  </div>`;
}

// The backends the mode allows, with their state; the default is the
// launcher's --backend when the mode allows it, else the first usable one.
function backendChoices(mode, backends, launcherBackend) {
  const byName = Object.fromEntries(backends.map((b) => [b.name, b]));
  const choices = (mode.supportedBackends || []).map((name) => byName[name] || { name, usable: true });
  const preferred = choices.find((b) => b.name === launcherBackend) || choices.find((b) => b.usable) || choices[0];
  return { choices, preferred: preferred ? preferred.name : null };
}

function BackendField({ choices, value, onChange }) {
  const chosen = choices.find((b) => b.name === value);
  return html`<div class="ln-field">
    <label for="ln-backend">${t('launcher.backend.label')}</label>
    <select id="ln-backend" name="backend" value=${value} aria-describedby="ln-backend-help" onChange=${(e) => onChange(e.target.value)}>
      ${choices.map((b) => html`<option key=${b.name} value=${b.name}>${b.usable ? b.name : t('launcher.backend.option', { name: b.name })}</option>`)}
    </select>
    <span class="ln-help" id="ln-backend-help">${t('launcher.backend.hint')}</span>
    ${chosen && !chosen.usable && html`<span class="ln-help ln-backend-problem" role="status">
      <strong>${t('launcher.backend.unusable', { name: chosen.name })}</strong> <code>${chosen.missing || 'pneuma backends'}</code>
      ${chosen.fix && html`<br />${t('launcher.backend.fix')} <code>${chosen.fix}</code>`}</span>`}
  </div>`;
}

// A folder that already has files is made a workspace only once the person
// has seen what will be written there (the server's list, details.writes)
// and said yes: the answer carries the list's digest back as `confirm`.
const WRITE_ACTIONS = {
  create: 'launcher.confirm.create',
  change: 'launcher.confirm.change',
  delete: 'launcher.confirm.delete',
};

function PlannedWrites({ writes, modeName }) {
  return html`<div class="ln-confirm" role="group" aria-labelledby="ln-confirm-h">
    <h3 id="ln-confirm-h">${t('launcher.confirm.title')}</h3>
    <p>${t('launcher.confirm.body', { mode: modeName })}</p>
    <ul class="ln-writes">${writes.map((w) => html`<li key=${w.path} data-action=${w.action}>
      <code>${w.path}</code> <span class="muted">${t(WRITE_ACTIONS[w.action] || 'launcher.confirm.change')}${w.files > 1 ? ` · ${t('launcher.recent.files', { count: w.files })}` : ''}</span></li>`)}</ul>
  </div>`;
}

function NewWorkspaceDialog({ mode, backends, launcherBackend, onClose, onOpened }) {
  const [folder, setFolderText] = useState(mode.suggestedFolder);
  const [planned, setPlanned] = useState(null); // {writes, confirm} for this folder
  const setFolder = (value) => { setFolderText(value); setPlanned(null); };
  const { choices, preferred } = backendChoices(mode, backends, launcherBackend);
  const [backend, setBackend] = useState(preferred);
  const [values, setValues] = useState(() => Object.fromEntries(mode.params.map((p) => [p.name, p.default == null ? (p.type === 'select' ? p.options[0] : '') : String(p.default)])));
  const [errors, setErrors] = useState({});
  const [problem, setProblem] = useState(null);
  const [submitting, setSubmitting] = useState(false);
  const dialogRef = useRef(null);
  const folderRef = useRef(null);
  const name = localized(mode.displayName) || mode.name;

  useEffect(() => {
    const previous = document.activeElement;
    if (folderRef.current) {
      folderRef.current.focus();
      folderRef.current.select();
    }
    return () => { if (previous && previous.focus) previous.focus(); };
  }, []);

  // Escape closes the dialog wherever the focus is (a button that was
  // disabled while submitting leaves it on the page's body).
  const submittingRef = useRef(submitting);
  submittingRef.current = submitting;
  useEffect(() => {
    const onEscape = (event) => {
      if (event.key !== 'Escape' || submittingRef.current) return;
      event.preventDefault();
      onClose();
    };
    document.addEventListener('keydown', onEscape);
    return () => document.removeEventListener('keydown', onEscape);
  }, []);

  function onKeyDown(event) {
    if (event.key !== 'Tab' || !dialogRef.current) return;
    // Keep the focus inside the dialog while it is open.
    const focusable = [...dialogRef.current.querySelectorAll('input, select, button, [href]')].filter((el) => !el.disabled);
    if (!focusable.length) return;
    const first = focusable[0];
    const last = focusable[focusable.length - 1];
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  }

  async function submit(event) {
    event.preventDefault();
    setErrors({});
    setProblem(null);
    setSubmitting(true);
    try {
      const request = { mode: mode.name, path: folder, params: values };
      if (backend) request.backend = backend;
      if (planned) request.confirm = planned.confirm;
      const answer = await api('/api/workspaces/new', request);
      onOpened(answer);
    } catch (error) {
      setSubmitting(false);
      if (error instanceof ApiError && error.details.reason === 'needs_confirmation') {
        setPlanned({ writes: error.details.writes || [], confirm: error.details.confirm });
        return;
      }
      const field = error instanceof ApiError ? error.details.field : undefined;
      const text = explainError(error, name);
      if (field && field.startsWith('params.')) setErrors({ [field.slice(7)]: text });
      else if (field === 'path') setErrors({ path: text });
      else setProblem(text);
      // Back to the field to fix (the submit button lost the focus while disabled).
      const target = field === 'path' ? 'ln-folder' : field && field.startsWith('params.') ? `ln-param-${field.slice(7)}` : null;
      setTimeout(() => {
        const input = target && document.getElementById(target);
        if (input) input.focus();
      }, 0);
    }
  }

  return html`<div class="ln-backdrop" onMouseDown=${(e) => { if (e.target === e.currentTarget && !submitting) onClose(); }}>
    <div class="ln-dialog" role="dialog" aria-modal="true" aria-labelledby="ln-dialog-h" ref=${dialogRef} onKeyDown=${onKeyDown}>
      <form onSubmit=${submit} novalidate>
        <div class="ln-dialog-head">
          <${ModeIcon} mode=${mode} size=${44} />
          <div>
            <h2 id="ln-dialog-h">${t('launcher.new.title', { mode: name })}</h2>
            <p class="muted">${localized(mode.description)}</p>
          </div>
        </div>
        <div class="ln-field">
          <label for="ln-folder">${t('launcher.new.folder')}</label>
          <input id="ln-folder" name="folder" ref=${folderRef} value=${folder} spellcheck="false" autocomplete="off"
            aria-invalid=${!!errors.path} aria-describedby="ln-folder-help" onInput=${(e) => setFolder(e.target.value)} />
          <span class="ln-help" id="ln-folder-help">${t('launcher.new.folderHint')}</span>
          ${errors.path && html`<span class="ln-field-error" role="alert">${errors.path}</span>`}
        </div>
        ${mode.params.length > 0 && html`<fieldset class="ln-params">
          <legend>${t('launcher.new.params')}</legend>
          ${mode.params.map((param) => html`<${ParamField} key=${param.name} param=${param} value=${values[param.name]} error=${errors[param.name]}
            onChange=${(value) => setValues({ ...values, [param.name]: value })} />`)}
        </fieldset>`}
        ${choices.length > 0 && html`<${BackendField} choices=${choices} value=${backend} onChange=${setBackend} />`}
        ${planned && html`<${PlannedWrites} writes=${planned.writes} modeName=${name} />`}
        ${problem && html`<div class="ln-problem" role="alert">${problem}</div>`}
        <div class="ln-dialog-actions">
          <button type="button" class="ln-btn" onClick=${onClose} disabled=${submitting}>${t('launcher.new.cancel')}</button>
          <button type="submit" class="ln-btn ln-btn-primary" disabled=${submitting}>${submitting ? t('launcher.new.starting') : planned ? t('launcher.confirm.go') : t('launcher.new.create')}</button>
        </div>
      </form>
    </div>
  </div>`;
}

// --- a shared file dropped on the page (docs/sharing.md, "Open a shared file") ---

/** What a shared file says of itself (its data element), or null for any other file. */
function sharedFileSummary(text) {
  const match = /<script type="application\/json" id="pneuma-share">([\s\S]*?)<\/script>/.exec(text);
  if (!match) return null;
  try {
    const data = JSON.parse(match[1]);
    if (!data || typeof data !== 'object' || typeof data.mode !== 'string') return null;
    return { title: String(data.title || ''), mode: data.mode,
      turns: Array.isArray(data.turns) ? data.turns.length : 0,
      messages: Array.isArray(data.conversation) ? data.conversation.length : 0 };
  } catch {
    return null;
  }
}

async function openDropped(file, folder) {
  const query = new URLSearchParams({ name: file.name });
  if (folder.trim()) query.set('path', folder.trim());
  const response = await fetch(`/api/workspaces/from-share?${query}`, {
    method: 'POST', headers: { 'Content-Type': 'text/html' }, body: file,
  });
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) throw new ApiError(response.status, data && data.error);
  return data;
}

function SharedFileDialog({ dropped, modes, onClose, onOpened }) {
  const { file, summary } = dropped;
  const [folder, setFolder] = useState('');
  const [problem, setProblem] = useState(null);
  const [submitting, setSubmitting] = useState(false);
  async function submit(event) {
    event.preventDefault();
    setSubmitting(true);
    setProblem(null);
    try {
      onOpened(await openDropped(file, folder));
    } catch (error) {
      setSubmitting(false);
      setProblem(explainError(error, modeLabel(modes, summary.mode)));
    }
  }
  return html`<div class="ln-backdrop" onMouseDown=${(e) => { if (e.target === e.currentTarget && !submitting) onClose(); }}>
    <div class="ln-dialog ln-shared-dialog" role="dialog" aria-modal="true" aria-labelledby="ln-shared-h">
      <form onSubmit=${submit} novalidate>
        <h2 id="ln-shared-h">${t('launcher.shared.title', { name: file.name })}</h2>
        <p class="muted ln-shared-about">${t('launcher.shared.about', { title: summary.title || file.name,
          mode: modeLabel(modes, summary.mode), turns: summary.turns, messages: summary.messages })}</p>
        <div class="ln-field">
          <label for="ln-shared-folder">${t('launcher.new.folder')}</label>
          <input id="ln-shared-folder" value=${folder} spellcheck="false" autocomplete="off"
            placeholder=${t('launcher.shared.folderDefault')} onInput=${(e) => setFolder(e.target.value)} />
          <span class="ln-help">${t('launcher.shared.folderHint')}</span>
        </div>
        ${problem && html`<div class="ln-problem" role="alert">${problem}</div>`}
        <div class="ln-dialog-actions">
          <button type="button" class="ln-btn" onClick=${onClose} disabled=${submitting}>${t('launcher.new.cancel')}</button>
          <button type="submit" class="ln-btn ln-btn-primary ln-shared-open" disabled=${submitting}>
            ${submitting ? t('launcher.new.starting') : t('launcher.shared.open')}</button>
        </div>
      </form>
    </div>
  </div>`;
}

function Launcher() {
  const [, setLocaleTick] = useState(0);
  const [info, setInfo] = useState(null);
  const [gallery, setGallery] = useState({ modes: [], errors: [] });
  const [workspaces, setWorkspaces] = useState([]);
  const [loaded, setLoaded] = useState(false);
  const [sessions, setSessions] = useState([]);
  const [query, setQuery] = useState('');
  const [dialog, setDialog] = useState(null);
  const [busy, setBusy] = useState(null);
  const [notice, setNotice] = useState(null);
  const [reopen, setReopen] = useState(REOPEN);
  const [dropped, setDropped] = useState(null); // {file, summary}: a shared file dropped on the page
  const queryRef = useRef(query);
  queryRef.current = query;

  useEffect(() => onLocaleChange(() => setLocaleTick((n) => n + 1)), []);
  useEffect(() => {
    document.title = t('launcher.pageTitle');
  });

  async function refresh() {
    const asked = queryRef.current;
    try {
      const [list, running] = await Promise.all([
        api(`/api/workspaces?q=${encodeURIComponent(asked)}`), api('/api/sessions')]);
      if (asked !== queryRef.current) return; // a newer search is on its way
      setWorkspaces(list.workspaces);
      setSessions(running.sessions);
      setLoaded(true);
    } catch (error) {
      setNotice(explainError(error));
    }
  }

  useEffect(() => {
    Promise.all([api('/api/launcher'), api('/api/modes')])
      .then(([launcherInfo, modes]) => { setInfo(launcherInfo); setGallery(modes); })
      .catch((error) => setNotice(explainError(error)));
  }, []);
  useEffect(() => {
    const timer = setTimeout(refresh, query ? 150 : 0);
    return () => clearTimeout(timer);
  }, [query]);
  useEffect(() => {
    const timer = setInterval(() => { if (!document.hidden) refresh(); }, REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  useEffect(() => {
    if (!reopen || !loaded) return;
    if (new URLSearchParams(location.search).has('reopen')) history.replaceState(null, '', location.pathname);
    const row = [...document.querySelectorAll('.ln-row')].find((el) => el.dataset.path === reopen);
    if (!row) return;
    row.scrollIntoView({ block: 'center' });
    const button = row.querySelector('.ln-btn-primary');
    if (button) button.focus();
  }, [reopen, loaded]);
  // Back from a workspace: the browser may show this page from its
  // back/forward cache exactly as it was left, mid-open ("Starting…",
  // "Opening…"). That open has finished (or failed there): start afresh.
  useEffect(() => {
    const onPageShow = (event) => {
      if (!event.persisted) return;
      setDialog(null);
      setBusy(null);
      setNotice(null);
      refresh();
    };
    window.addEventListener('pageshow', onPageShow);
    return () => window.removeEventListener('pageshow', onPageShow);
  }, []);

  function go(answer) {
    window.location.assign(answer.url);
  }

  // A shared file dropped anywhere on the page: offer to open it as a new workspace.
  useEffect(() => {
    const onDragOver = (event) => {
      if (event.dataTransfer && [...event.dataTransfer.types].includes('Files')) event.preventDefault();
    };
    const onDrop = async (event) => {
      const file = event.dataTransfer && event.dataTransfer.files[0];
      if (!file) return;
      event.preventDefault();
      const summary = /\.html?$/i.test(file.name) ? sharedFileSummary(await file.text()) : null;
      if (summary) setDropped({ file, summary });
      else setNotice(t('launcher.shared.notShared', { name: file.name }));
    };
    window.addEventListener('dragover', onDragOver);
    window.addEventListener('drop', onDrop);
    return () => {
      window.removeEventListener('dragover', onDragOver);
      window.removeEventListener('drop', onDrop);
    };
  }, []);

  async function open(workspace) {
    setBusy(workspace.path);
    setNotice(null);
    setReopen(null);
    try {
      go(await api('/api/workspaces/open', { path: workspace.path, mode: workspace.mode }));
    } catch (error) {
      setBusy(null);
      setNotice(explainError(error, modeLabel(gallery.modes, workspace.mode)));
      refresh();
    }
  }

  async function forget(workspace) {
    try {
      await api('/api/workspaces/forget', { path: workspace.path });
    } catch (error) {
      setNotice(explainError(error));
    }
    refresh();
  }

  async function stop(session) {
    setBusy(session.path);
    try {
      await api('/api/sessions/stop', { path: session.path });
    } catch (error) {
      setNotice(explainError(error));
    }
    setBusy(null);
    refresh();
  }

  const visibleModes = gallery.modes;
  return html`<div class="ln-page">
    <header class="ln-top">
      <div class="brand"><span class="logo" />Pneuma</div>
      ${info && html`<span class="ln-top-version muted">${t('launcher.mode.version', { version: info.version })}</span>`}
      <span class="ln-spacer"></span>
      <${LanguageSwitch} />
    </header>
    <main class="ln-main">
      <div class="ln-hero">
        <h1>${t('launcher.heading')}</h1>
        <p class="muted">${t('launcher.tagline')}</p>
      </div>
      ${notice && html`<div class="ln-notice" role="alert"><span>${notice}</span>
        <button class="ln-btn ln-btn-quiet" onClick=${() => setNotice(null)}>${t('launcher.dismiss')}</button></div>`}
      <section class="ln-section" aria-labelledby="ln-modes-h">
        <div class="ln-section-head">
          <h2 id="ln-modes-h">${t('launcher.modes.heading')}</h2>
          <span class="muted ln-section-hint">${t('launcher.modes.hint')}</span>
        </div>
        <div class="ln-gallery">${visibleModes.map((mode) => html`<${ModeCard} key=${mode.name} mode=${mode} onNew=${setDialog} />`)}</div>
        <${AddModeBox} api=${api} onInstalled=${() => api('/api/modes').then(setGallery).catch((error) => setNotice(explainError(error)))} />
        <${FailedPlugins} errors=${gallery.errors} />
      </section>
      <${Sessions} sessions=${sessions} modes=${gallery.modes} onStop=${stop} busy=${busy} />
      <${Workspaces} workspaces=${workspaces} modes=${gallery.modes} query=${query} setQuery=${setQuery}
        onOpen=${open} onForget=${forget} busy=${busy} loaded=${loaded} reopen=${reopen} />
      ${info && html`<footer class="ln-footer muted">${t('launcher.footer', { path: info.listFile })}</footer>`}
    </main>
    ${dialog && html`<${NewWorkspaceDialog} mode=${dialog} backends=${info ? info.backends || [] : []} launcherBackend=${info && info.backend}
      onClose=${() => setDialog(null)} onOpened=${go} />`}
    ${dropped && html`<${SharedFileDialog} dropped=${dropped} modes=${gallery.modes}
      onClose=${() => setDropped(null)} onOpened=${go} />`}
  </div>`;
}

function explain(title, body) {
  explainProblem(root, title, body);
}

async function start() {
  await initI18n();
  let probe;
  try {
    probe = await fetch('/api/launcher', { cache: 'no-store' });
  } catch {
    explain(t('launcher.error.unreachableTitle'), t('launcher.error.unreachable'));
    return;
  }
  if (probe.status === 401) {
    explain(t('launcher.token.title'), t('launcher.token.body'));
    return;
  }
  try {
    ({ html, render, useState, useEffect, useRef } = await import('./vendor/preact-htm.js'));
    ({ LanguageSwitch, glyphsFor } = await import('./lib/language-switch.js'));
    ({ AddModeBox } = await import('./lib/mode-add.js'));
    ({ ModeCheckReport } = await import('./lib/mode-check-report.js'));
  } catch (error) {
    explain(ready() ? t('boot.vendor.title') : 'scripts/build-web', ready() ? t('boot.vendor.body') : String(error));
    return;
  }
  await glyphsFor(FIRST_SCREEN_KEYS.map((key) => t(key)).join(''));
  root.replaceChildren();
  render(html`<${Launcher} />`, root);
}

// The first screen's words, whose glyphs are fetched before it is drawn.
const FIRST_SCREEN_KEYS = ['launcher.heading', 'launcher.tagline', 'launcher.modes.heading', 'launcher.modes.hint',
  'launcher.recent.heading', 'launcher.recent.search', 'launcher.recent.empty', 'launcher.mode.builtIn',
  'launcher.mode.new', 'launcher.sessions.heading', 'launcher.footer', 'launcher.open', 'launcher.recent.forget'];


start();
