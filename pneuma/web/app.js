// Pneuma's shell: the chat beside the mode's viewer.
//
// Data flow: SessionSocket → store.receive (dedupe by seq, build the
// conversation) → Preact renders from the store. Viewer traffic
// (content_update, viewer_action_request) goes to the ViewerHost; the
// person's input goes back through `shell` (lib/shell-state.js). The parts:
// lib/chat.js, lib/composer.js, lib/dialogs.js, lib/header.js; a backend's
// own UI comes through the backend slot (lib/backend-ui.js).

import { html, render, useState, useEffect, useRef } from './vendor/preact-htm.js';
import { SessionSocket } from './lib/socket.js';
import { api, ViewerHost, localized } from './lib/viewer-host.js';
import { t, onLocaleChange } from './lib/i18n.js';
import { glyphsFor } from './lib/language-switch.js';
import { holdSaves, preference, setPreference } from './lib/preferences.js';
import { rewind } from './lib/rewind.js';
import { turnChecks } from './lib/turn-checks.js';
import { loadBackendUi } from './lib/backend-ui.js';
import { AnnotateSwitch, attachPins, pinsReceive, takeSelection } from './lib/pins.js';
import { Icon, isRunning, shell, store, ui, useStore } from './lib/shell-state.js';
import { ChatPanel, chatReceive } from './lib/chat.js';
import { ConfirmDialog } from './lib/dialogs.js';
import { Header } from './lib/header.js';
import { SessionEnded } from './lib/stopped.js';
import { HEADLESS, runsRequest, viewerHost } from './lib/headless-client.js';
import { AgentFollower, FollowNotice, personIsBusy } from './lib/follow.js';
import { Notifier } from './lib/notify.js';
import { attachCompare } from './lib/compare.js';
import { Timeline, timelineReceive } from './lib/timeline.js';
import { ReplayButton } from './lib/replay.js';

async function onSocketMessage(message) {
  if (!store.receive(message)) return; // a duplicate (seq already applied)
  rewind.receive(store, message); // per-turn checkpoints: lib/rewind.js
  turnChecks.receive(store, message); // the checks after each turn: lib/turn-checks.js
  chatReceive(store, message); // what the chat keeps: queued follow-ups, what re-renders (lib/chat.js)
  pinsReceive(message); // review pins: every tab's list, addressed after a turn (lib/pins.js)
  timelineReceive(message); // the checkpoints' ticks under the viewer (lib/timeline.js)
  if (message.type === 'status_change' && message.status === 'idle') ui.stopping = false;
  if (message.type === 'content_update' && ui.host) {
    ui.host.contentUpdate(message.files || []);
  } else if (message.type === 'mode_event' && ui.host) {
    ui.host.modeEvent(message.name, message.data);
  } else if (message.type === 'viewer_action_request') {
    if (!runsRequest(message)) return; // the headless page's own, or not for it (lib/headless-client.js)
    const host = ui.host || await viewerHost(ui);
    const result = host
      ? await host.runAction(message.action_id, message.params || {})
      : { success: false, message: 'the viewer is not loaded yet' }; // for the agent
    ui.socket.send({ type: 'viewer_action_response', request_id: message.request_id, result });
  }
  if (ui.notifier) ui.notifier.receive(message); // a hidden tab: notification, badge (lib/notify.js)
  if (ui.follower) ui.follower.receive(message); // a turn's files to the front (lib/follow.js)
}

// --- layout ---------------------------------------------------------------

function Splitter({ width, setWidth }) {
  const onPointerDown = (e) => {
    e.preventDefault();
    const startX = e.clientX;
    const startWidth = width;
    document.body.classList.add('resizing');
    const move = (ev) => {
      const next = Math.max(300, Math.min(window.innerWidth - 320, startWidth - (ev.clientX - startX)));
      setWidth(next);
    };
    const up = () => {
      document.body.classList.remove('resizing');
      window.removeEventListener('pointermove', move);
      window.removeEventListener('pointerup', up);
    };
    window.addEventListener('pointermove', move);
    window.addEventListener('pointerup', up);
  };
  const onKeyDown = (e) => {
    if (e.key === 'ArrowLeft') setWidth(Math.min(window.innerWidth - 320, width + 24));
    if (e.key === 'ArrowRight') setWidth(Math.max(300, width - 24));
  };
  return html`<div class="splitter" role="separator" aria-orientation="vertical" tabindex="0"
    title=${t('layout.resize')} onPointerDown=${onPointerDown} onKeyDown=${onKeyDown} />`;
}

function App() {
  useStore();
  const mode = ui.config.mode;
  const appLayout = mode.layout === 'app';
  // The person's, not this port's (lib/preferences.js).
  const [chatHidden, setChatHidden] = useState(() => preference('chatHidden')[appLayout ? 'app' : 'editor'] === true);
  const [width, setWidthState] = useState(() => preference('chatWidth') || 420);
  const viewerRef = useRef(null);
  const setWidth = (w) => {
    setWidthState(w);
    setPreference('chatWidth', Math.round(w));
  };
  const toggleChat = () => {
    const next = !chatHidden;
    setChatHidden(next);
    setPreference('chatHidden', { [appLayout ? 'app' : 'editor']: next });
  };

  useEffect(() => {
    const host = new ViewerHost({
      config: ui.config,
      element: viewerRef.current,
      shell: {
        setSelection: (s) => shell.setSelection(s),
        setActiveFile: (path) => { ui.activeFile = path; store.notify(); },
        confirm: (summary, details) => shell.confirmLocally(summary, details),
        sendMessage: (text) => shell.send(text),
        takeSelection: (s) => takeSelection(s),
      },
    });
    ui.host = host;
    host.start().then(() => {
      ui.viewerReady = true;
      if (host.loadError) ui.viewerNotice = host.loadError;
      attachPins();
      store.notify();
    });
    // "Compare" on a turn, over the viewer (lib/compare.js).
    const stopCompare = attachCompare({ host: () => ui.host, panel: () => viewerRef.current.parentElement });
    return () => { stopCompare(); host.destroy(); };
  }, []);

  useEffect(() => {
    const onKey = (e) => {
      if (e.key !== 'Escape' || e.defaultPrevented) return;
      const confirmation = store.state.confirmations[0];
      if (confirmation) {
        shell.answerConfirmation(confirmation, false);
        return;
      }
      if (isRunning()) {
        e.preventDefault();
        shell.interrupt();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const title = `${ui.notifier ? ui.notifier.titleBadge() : ''}${isRunning() ? '● ' : ''}${localized(mode.displayName) || mode.name} · Pneuma`;
  if (document.title !== title) document.title = title;

  return html`<div class=${`shell layout-${appLayout ? 'app' : 'editor'}${chatHidden ? ' chat-hidden' : ''}`}
      style=${appLayout ? '' : `--chat-width: ${width}px`}>
    <${Header} chatHidden=${chatHidden} toggleChat=${toggleChat} />
    <${SessionEnded} />
    <main class="workspace">
      <section class="viewer-panel" aria-label=${t('layout.viewer')}>
        ${ui.viewerNotice && html`<div class="viewer-notice"><${Icon} name="warn" size=${14} />${ui.viewerNotice}
          <button class="chip-x" aria-label=${t('layout.dismiss')} onClick=${() => { ui.viewerNotice = null; store.notify(); }}><${Icon} name="x" size=${12} /></button></div>`}
        <${FollowNotice} follower=${ui.follower} />
        ${!ui.viewerReady && html`<div class="viewer-loading"><span class="spinner" />${t('layout.loadingViewer')}</div>`}
        <div class="viewer-root" ref=${viewerRef} />
        ${ui.viewerReady && !HEADLESS && html`<${Timeline} host=${() => ui.host} panel=${() => viewerRef.current && viewerRef.current.parentElement} />`}
        ${ui.viewerReady && !HEADLESS && html`<${ReplayButton} host=${() => ui.host} panel=${() => viewerRef.current && viewerRef.current.parentElement} />`}
        <${AnnotateSwitch} />
      </section>
      ${!appLayout && !chatHidden && html`<${Splitter} width=${width} setWidth=${setWidth} />`}
      ${!chatHidden && html`<${ChatPanel} floating=${appLayout} onClose=${toggleChat} />`}
      ${appLayout && chatHidden && html`<button class=${`chat-fab${isRunning() ? ' busy' : ''}`} onClick=${toggleChat} aria-label=${t('chat.open')}><${Icon} name="chat" size=${20} /></button>`}
    </main>
    <${ConfirmDialog} />
    ${ui.backendUi.overlays.map((Overlay) => html`<${Overlay} />`)}
  </div>`;
}

// --- start -----------------------------------------------------------------

export async function start(root) {
  const params = new URLSearchParams(location.search);
  let config;
  let info;
  try {
    [config, info] = await Promise.all([api.json('/api/config'), api.json('/api/session')]);
  } catch (error) {
    throw new Error(t('start.noSession', { message: error.message }));
  }
  ui.config = config;
  const sessionId = params.get('session') || info.session_id;
  store.state.session = { ...info };
  store.state.status = info.status || 'idle';

  // The token set an HttpOnly cookie on this load; keep it out of the
  // address bar (and out of screenshots and history).
  if (params.has('token')) {
    params.delete('token');
    if (!params.has('session')) params.set('session', sessionId);
    history.replaceState(null, '', `${location.pathname}?${params}${location.hash}`);
  }

  ui.socket = new SessionSocket({
    sessionId,
    lastSeq: () => store.state.lastSeq,
    conversationId: () => (store.state.conversation && store.state.conversation.id) || null,
    onMessage: onSocketMessage,
    onState: (connection) => {
      // A stopped or gone server takes no preferences: none is sent its way.
      // Nor does the server's headless page: the preferences are the person's.
      holdSaves(HEADLESS || connection.state === 'stopped' || connection.state === 'gone');
      store.setConnection(connection);
    },
  });

  turnChecks.start(); // the workspace's repair setting, and whether the person is typing

  // Let the server trim its replay buffer now and then.
  setInterval(() => {
    if (store.state.lastSeq) ui.socket.send({ type: 'session_ack', last_seq: store.state.lastSeq });
  }, 15_000);

  // What a hidden tab tells the person, and the viewer following the agent.
  ui.notifier = new Notifier({
    doc: document, win: window, changed: () => store.notify(),
    place: () => [localized(config.mode.displayName) || config.mode.name,
      String(config.workspace || '').split('/').filter(Boolean).pop()].filter(Boolean).join(' · '),
  }).attach();
  ui.follower = new AgentFollower({
    host: () => ui.host, running: isRunning, busy: () => personIsBusy(document, ui.selection),
    changed: () => store.notify(),
  });

  // The backend's own UI, before any message can arrive for it.
  ui.backendUi = await loadBackendUi(config.backendModule, {
    html, useState, useEffect, t, api, store, shell, socket: () => ui.socket,
  });

  // The Chinese glyphs of the header and the first labels, before they are laid out.
  await glyphsFor([ui.config.mode && localized(ui.config.mode.displayName), t('chat.label'),
    t('status.idle'), t('composer.placeholder')].join(''));
  root.replaceChildren();
  // A language switch re-renders everything from the store.
  onLocaleChange(() => store.notify());
  render(html`<${App} />`, root);
  ui.socket.connect();
  window.pneuma = { store, ui, shell }; // for debugging and the browser tests
}
