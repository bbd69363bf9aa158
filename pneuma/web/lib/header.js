// The header: where the person is (mode, workspace, file), the connection
// and agent status, export, model and language menus, and whatever the
// session's backend adds there (lib/backend-ui.js).

import { html, useState, useEffect, useRef } from '../vendor/preact-htm.js';
import { localized } from './viewer-host.js';
import { t } from './i18n.js';
import { LanguageSwitch } from './language-switch.js';
import { useDismiss } from './dismiss.js';
import { ExportMenu } from './export-menu.js';
import { AttentionMenu } from './attention-menu.js';
import { Icon, hasAgent, isRunning, shell, store, ui } from './shell-state.js';

const MODEL_CHOICES = [
  // labels and hints are catalogue keys (t() at render time)
  { value: 'default', label: 'model.default', hint: 'model.default.hint' },
  { value: 'opus', label: 'Opus', hint: 'model.opus.hint' },
  { value: 'sonnet', label: 'Sonnet', hint: 'model.sonnet.hint' },
  { value: 'haiku', label: 'Haiku', hint: 'model.haiku.hint' },
];

function StatusPill() {
  const state = store.state;
  const [, tick] = useState(0);
  const conn = state.connection;
  useEffect(() => {
    if (conn.state !== 'reconnecting') return undefined;
    const timer = setInterval(() => tick((n) => n + 1), 500);
    return () => clearInterval(timer);
  }, [conn.state]);
  let tone = 'ok';
  let label = t('status.idle');
  let title = t('status.idle.title');
  if (conn.state === 'stopped' || conn.state === 'gone') { // lib/stopped.js says why
    tone = 'bad';
    label = conn.state === 'stopped' ? t('status.stopped') : t('status.gone');
    title = conn.state === 'stopped' ? t('status.stopped.title') : t('status.gone.title');
  } else if (conn.state === 'reconnecting') {
    const secs = Math.max(0, Math.ceil((conn.retryAt - Date.now()) / 1000));
    tone = 'bad';
    label = secs > 0 ? t('status.reconnectingIn', { seconds: secs }) : t('status.reconnecting');
    title = t('status.reconnecting.title');
  } else if (conn.state === 'connecting') {
    tone = 'wait';
    label = t('status.connecting');
    title = t('status.connecting.title');
  } else if (!hasAgent()) {
    tone = 'off';
    label = t('status.noAgent');
    title = t('status.noAgent.title');
  } else if (isRunning()) {
    tone = 'busy';
    label = state.status === 'compacting' ? t('status.compacting') : t('status.running');
    title = t('status.running.title');
  }
  return html`<button class=${`pill ${tone}`} data-state=${conn.state} data-status=${state.status} title=${title}
      onClick=${() => ui.socket.reconnectNow()}>
    <span class="dot" />${label}
  </button>`;
}

function ModelMenu() {
  const session = store.state.session || {};
  const [open, setOpen] = useState(false);
  const [custom, setCustom] = useState('');
  const ref = useRef(null);
  useDismiss(ref, open, () => setOpen(false));
  if (!hasAgent()) return null;
  const current = session.model || 'default';
  const choose = (value) => {
    setOpen(false);
    if (value && value !== current) shell.setModel(value);
  };
  return html`<div class="menu" ref=${ref}>
    <button class="model-btn" onClick=${() => setOpen(!open)} title=${t('model.switch')} aria-haspopup="menu" aria-expanded=${open}>
      <span class="muted">${t('model.label')}</span> <span class="model-name">${current === 'default' ? t('model.default') : current}</span>
    </button>
    ${open && html`<div class="menu-pop" role="menu">
      ${MODEL_CHOICES.map((m) => html`<button role="menuitem" class=${`menu-item${m.value === current ? ' current' : ''}`} data-model=${m.value} onClick=${() => choose(m.value)}>
        <span>${m.label.startsWith('model.') ? t(m.label) : m.label}</span><span class="muted">${t(m.hint)}</span></button>`)}
      <form class="menu-custom" onSubmit=${(e) => { e.preventDefault(); choose(custom.trim()); setCustom(''); }}>
        <input placeholder=${t('model.custom')} value=${custom} onInput=${(e) => setCustom(e.target.value)} />
      </form>
    </div>`}
  </div>`;
}


export function Header({ chatHidden, toggleChat }) {
  const mode = ui.config.mode;
  const workspace = ui.config.workspace || '';
  const base = workspace.split('/').filter(Boolean).pop() || workspace;
  return html`<header class="topbar">
    <div class="brand"><span class="logo" />Pneuma</div>
    <div class="crumbs">
      <span class="mode-name">${localized(mode.displayName) || mode.name}</span>
      <span class="sep">/</span>
      <span class="ws" title=${workspace}>${base}</span>
      ${ui.activeFile && html`<span class="sep">/</span><span class="active-file" title=${ui.activeFile}>${ui.activeFile}</span>`}
    </div>
    <div class="spacer" />
    ${ui.backendUi.header.map((Part) => html`<${Part} />`)}
    <${StatusPill} />
    <${ExportMenu} />
    <${ModelMenu} />
    <${AttentionMenu} />
    <${LanguageSwitch} />
    <button class="icon-btn" title=${chatHidden ? t('chat.showTitle') : t('chat.hideTitle')} onClick=${toggleChat} aria-pressed=${!chatHidden}>
      <${Icon} name=${mode.layout === 'app' ? 'chat' : 'sidebar'} />
    </button>
  </header>`;
}
