// What every part of the shell shares: the store, the page's own state
// (`ui`), what the page does (`shell`: send, interrupt, answer a prompt …),
// and the small pieces every part draws with (useStore, Icon).

import { html, useState, useEffect } from '../vendor/preact-htm.js';
import { createStore } from './store.js';

export const store = createStore();
export const ui = {
  config: null,
  host: null,
  socket: null,
  selection: null,
  activeFile: null,
  viewerNotice: null,
  viewerReady: false,
  stopping: false,
  backendUi: { header: [], overlays: [] }, // from the backend's module (lib/backend-ui.js)
};

// --- what the page does -------------------------------------------------

export const shell = {
  // `context`: a viewer context of the caller's own (a review, lib/pins.js)
  // instead of the selection chip's.
  send(text, images = [], context = undefined) {
    const content = String(text || '');
    if (!content.trim() && !images.length) return false;
    const clientId = (crypto.randomUUID && crypto.randomUUID()) || `c${Date.now()}${Math.random()}`;
    const viewerContext = context !== undefined ? context : ui.host ? ui.host.context() : null;
    const message = {
      type: 'user_message',
      content,
      images: images.map((i) => ({ media_type: i.media_type, data: i.data })),
      client_msg_id: clientId,
    };
    if (viewerContext) message.viewer_context = viewerContext;
    store.addPendingUser({
      content,
      images: images.map((i) => ({ media_type: i.media_type, size: i.data.length, url: i.url })),
      viewerContext,
      clientId,
    });
    ui.socket.send(message, { queue: true });
    return true;
  },
  interrupt() {
    if (!isRunning()) return;
    ui.stopping = true;
    ui.socket.send({ type: 'interrupt' });
    store.notify();
  },
  setModel(model) {
    ui.socket.send({ type: 'set_model', model }, { queue: true });
  },
  // `updatedInput`: the tool's input as the person changed it (a question
  // card's answers, lib/question-cards.js); by default the agent's own.
  answerPermission(request, behavior, message, updatedInput) {
    const answer = { type: 'permission_response', request_id: request.request_id, behavior };
    if (behavior === 'allow' && updatedInput) answer.updated_input = updatedInput;
    if (behavior === 'deny') answer.message = message || 'The person denied this in the Pneuma page.'; // for the agent: stays English
    ui.socket.send(answer, { queue: true });
    store.markDecided(request.tool_use_id, behavior);
    store.dropPermission(request.request_id);
  },
  answerConfirmation(confirmation, approved) {
    if (confirmation.local) confirmation.resolve(approved);
    else ui.socket.send({ type: 'confirmation_response', request_id: confirmation.request_id, approved }, { queue: true });
    store.shiftConfirmation(confirmation.request_id);
  },
  confirmLocally(summary, details) {
    return new Promise((resolve) => {
      store.addLocalConfirmation({
        type: 'confirmation_request', local: true, kind: 'viewer',
        request_id: `local-${Date.now()}-${Math.random()}`, summary, details, resolve,
      });
    });
  },
  setSelection(selection) {
    ui.selection = selection;
    store.notify();
  },
  clearSelection() {
    ui.selection = null;
    if (ui.host) ui.host.clearSelection();
    store.notify();
  },
};

export function isRunning() {
  const s = store.state.status;
  return s && s !== 'idle';
}

export function hasAgent() {
  const session = store.state.session;
  const backend = session ? session.backend : ui.config && ui.config.backend;
  return backend !== 'none' && !(session && session.no_agent_reason);
}

export function useStore() {
  const [, force] = useState(0);
  useEffect(() => store.subscribe(() => force((n) => n + 1)), []);
  return store.state;
}

export function Icon({ name, size = 16 }) {
  const paths = {
    send: 'M3.4 20.4 21 12 3.4 3.6 3.3 10l12.6 2-12.6 2z',
    stop: 'M7 7h10v10H7z',
    clip: 'M16.5 6.5v10a4.5 4.5 0 0 1-9 0V5a3 3 0 0 1 6 0v10.5a1.5 1.5 0 0 1-3 0V6.5',
    x: 'M6 6l12 12M18 6 6 18',
    chevron: 'M9 6l6 6-6 6',
    bolt: 'M13 2 4 14h7l-1 8 9-12h-7z',
    chat: 'M4 5h16v11H8l-4 4z',
    target: 'M12 3v3M12 18v3M3 12h3M18 12h3M12 8a4 4 0 1 0 0 8 4 4 0 0 0 0-8z',
    warn: 'M12 3 2 21h20L12 3zM12 10v5M12 18v.5',
    down: 'M12 5v14M6 13l6 6 6-6',
    sidebar: 'M4 5h16v14H4zM15 5v14',
  };
  const filled = name === 'send' || name === 'stop' || name === 'bolt';
  return html`<svg class="icon" width=${size} height=${size} viewBox="0 0 24 24" aria-hidden="true"
    fill=${filled ? 'currentColor' : 'none'} stroke=${filled ? 'none' : 'currentColor'}
    stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round"><path d=${paths[name]} /></svg>`;
}
