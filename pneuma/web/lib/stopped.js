// When this page's session is over: the launcher stopped the workspace
// (lib/socket.js state "stopped", from `workspace_stopped`, docs/protocol.md),
// or its server stopped answering (state "gone"). One line says which, with
// the way back (the launcher, or trying again); nothing can be sent meanwhile.

import { html } from '../vendor/preact-htm.js';
import { t } from './i18n.js';
import { store, ui } from './shell-state.js';

function connection() {
  return store.state.connection || {};
}

/** Why sending is over on this page, as a catalogue key; null while it is not. */
export function sendingEnded() {
  const { state, ended } = connection();
  if (state === 'gone') return 'ended.gone.composer';
  if (state !== 'stopped') return null;
  const reason = ended && ended.reason;
  if (reason === 'exiting') return 'ended.exiting.composer';
  if (reason === 'terminal') return 'ended.terminal.composer';
  return 'ended.stopped.composer';
}

/** The launcher's page, pointing at this workspace's row (no token: its cookie opens it). */
function reopenUrl(launcher) {
  let url;
  try {
    url = new URL(launcher);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const cwd = store.state.session && store.state.session.cwd;
  if (cwd) url.searchParams.set('reopen', cwd);
  return url.href;
}

function Stopped({ ended }) {
  // The launcher exiting, or `pneuma run` stopped in its terminal: nothing
  // here can start it again, the line says where.
  const reason = ended && ended.reason;
  const words = reason === 'exiting' ? [t('ended.exiting.title'), t('ended.exiting.body')]
    : reason === 'terminal' ? [t('ended.terminal.title'), t('ended.terminal.body')] : null;
  if (words) {
    return html`<div class="notice error session-ended" role="alert" data-ended=${reason}>
      <div class="notice-title">${words[0]}</div>
      <div class="notice-body">${words[1]}</div>
    </div>`;
  }
  const reopen = ended && ended.launcher ? reopenUrl(ended.launcher) : null;
  return html`<div class="notice error session-ended" role="alert" data-ended="stopped">
    <div class="notice-title">${t('ended.stopped.title')}</div>
    <div class="notice-body">${t('ended.stopped.body')}
      ${reopen && html` <a class="session-reopen" href=${reopen}>${t('ended.stopped.reopen')}</a>`}</div>
  </div>`;
}

function Gone() {
  return html`<div class="notice error session-ended" role="alert" data-ended="gone">
    <div class="notice-title">${t('ended.gone.title')}</div>
    <div class="notice-body">${t('ended.gone.body')}
      <button class="link session-retry" onClick=${() => ui.socket.reconnectNow()}>${t('ended.gone.retry')}</button></div>
  </div>`;
}

/** The line under the header while the session is over (nothing otherwise). */
export function SessionEnded() {
  const { state, ended } = connection();
  if (state === 'stopped') return html`<${Stopped} ended=${ended} />`;
  if (state === 'gone') return html`<${Gone} />`;
  return null;
}
