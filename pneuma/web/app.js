// Pneuma's shell: the chat beside the mode's viewer.
//
// Data flow: SessionSocket → store.receive (dedupe by seq, build the
// conversation) → Preact renders from the store. Viewer traffic
// (content_update, viewer_action_request) goes to the ViewerHost; the
// person's input goes back through `shell` below.

import { html, render, useState, useEffect, useLayoutEffect, useRef, useCallback } from './vendor/preact-htm.js';
import { createStore } from './lib/store.js';
import { SessionSocket } from './lib/socket.js';
import { ConversationMenu } from './lib/conversations.js';
import { api, ViewerHost, localized, selectionLabel } from './lib/viewer-host.js';
import { renderMarkdown, escapeHtml, highlight, languageOf } from './lib/markdown.js';
import { t, getLocale, onLocaleChange, formatCost, formatDuration } from './lib/i18n.js';
import { LanguageSwitch, glyphsFor } from './lib/language-switch.js';
import { useDismiss } from './lib/dismiss.js';
import { ExportMenu } from './lib/export-menu.js';
import { rewind, TurnChanges, RewindNote } from './lib/rewind.js';
import { SavingBanner } from './lib/saving-banner.js';

const ACCEPTED_IMAGES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
const MAX_IMAGE_BYTES = 3.7 * 1024 * 1024; // the API's 5 MB base64 limit, with room
const MODEL_CHOICES = [
  // labels and hints are catalogue keys (t() at render time)
  { value: 'default', label: 'model.default', hint: 'model.default.hint' },
  { value: 'opus', label: 'Opus', hint: 'model.opus.hint' },
  { value: 'sonnet', label: 'Sonnet', hint: 'model.sonnet.hint' },
  { value: 'haiku', label: 'Haiku', hint: 'model.haiku.hint' },
];

const store = createStore();
const ui = {
  config: null,
  host: null,
  socket: null,
  selection: null,
  activeFile: null,
  viewerNotice: null,
  viewerReady: false,
  stopping: false,
};

// --- what the page does -------------------------------------------------

const shell = {
  send(text, images = []) {
    const content = String(text || '');
    if (!content.trim() && !images.length) return false;
    const clientId = (crypto.randomUUID && crypto.randomUUID()) || `c${Date.now()}${Math.random()}`;
    const viewerContext = ui.host ? ui.host.context() : null;
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
  answerPermission(request, behavior, message) {
    const answer = { type: 'permission_response', request_id: request.request_id, behavior };
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

function isRunning() {
  const s = store.state.status;
  return s && s !== 'idle';
}

function hasAgent() {
  const session = store.state.session;
  const backend = session ? session.backend : ui.config && ui.config.backend;
  return backend !== 'none' && !(session && session.no_agent_reason);
}

async function onSocketMessage(message) {
  if (!store.receive(message)) return; // a duplicate (seq already applied)
  rewind.receive(store, message); // per-turn checkpoints: lib/rewind.js
  if (message.type === 'status_change' && message.status === 'idle') ui.stopping = false;
  if (message.type === 'content_update' && ui.host) {
    ui.host.contentUpdate(message.files || []);
  } else if (message.type === 'mode_event' && ui.host) {
    ui.host.modeEvent(message.name, message.data);
  } else if (message.type === 'viewer_action_request') {
    const result = ui.host
      ? await ui.host.runAction(message.action_id, message.params || {})
      : { success: false, message: 'the viewer is not loaded yet' }; // for the agent
    ui.socket.send({ type: 'viewer_action_response', request_id: message.request_id, result });
  }
}

// --- small pieces ---------------------------------------------------------

function useStore() {
  const [, force] = useState(0);
  useEffect(() => store.subscribe(() => force((n) => n + 1)), []);
  return store.state;
}

function Icon({ name, size = 16 }) {
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

function Markdown({ text, streaming }) {
  return html`<div class=${`md${streaming ? ' streaming' : ''}`} dangerouslySetInnerHTML=${{ __html: renderMarkdown(text) }} />`;
}

function shortPath(path) {
  const cwd = store.state.session && store.state.session.cwd;
  const p = String(path || '');
  if (cwd && p.startsWith(`${cwd}/`)) return p.slice(cwd.length + 1);
  return p;
}

function toolSummary(name, input) {
  if (!input || typeof input !== 'object') return '';
  const pick = input.file_path || input.notebook_path || input.path;
  if (pick) return shortPath(pick);
  if (input.command) return String(input.command).split('\n')[0];
  if (input.pattern) return input.path ? t('tool.patternIn', { pattern: input.pattern, path: shortPath(input.path) }) : String(input.pattern);
  if (input.url) return input.url;
  if (input.query) return input.query;
  if (input.description) return input.description;
  if (input.prompt) return String(input.prompt).split('\n')[0];
  if (Array.isArray(input.todos)) return t('tool.todos', { count: input.todos.length });
  const first = Object.values(input).find((v) => typeof v === 'string');
  return first ? first.split('\n')[0] : '';
}

function resultText(content) {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((b) => (b && b.type === 'text' ? b.text : b && b.type === 'image' ? t('tool.imagePlaceholder') : JSON.stringify(b))).join('\n');
  }
  return JSON.stringify(content, null, 2);
}

function Code({ code, language, className = '' }) {
  return html`<pre class=${`code ${className}`}><code class="hljs" dangerouslySetInnerHTML=${{ __html: highlight(code, language) }} /></pre>`;
}

function Clipped({ text, lines = 14, language = null }) {
  const [all, setAll] = useState(false);
  const rows = String(text).split('\n');
  const long = rows.length > lines;
  const shown = all || !long ? text : rows.slice(0, lines).join('\n');
  return html`<div class="clipped">
    <${Code} code=${shown} language=${language} />
    ${long && html`<button class="link" onClick=${() => setAll(!all)}>${all ? t('clip.showLess') : t('clip.showAll', { count: rows.length })}</button>`}
  </div>`;
}

/** What a tool will do, for cards and permission prompts. */
function ToolInput({ name, input }) {
  if (!input || typeof input !== 'object') return null;
  if (input.command) {
    return html`<div class="tool-io"><div class="io-label">${t('tool.command')}</div><${Code} code=${String(input.command)} language="bash" />
      ${input.description && html`<div class="io-note">${input.description}</div>`}</div>`;
  }
  if (typeof input.content === 'string' && (input.file_path || input.path)) {
    return html`<div class="tool-io"><div class="io-label">${t('tool.write')} <code>${shortPath(input.file_path || input.path)}</code></div>
      <${Clipped} text=${input.content} language=${languageOf(input.file_path || input.path)} /></div>`;
  }
  if (typeof input.old_string === 'string') {
    return html`<div class="tool-io"><div class="io-label">${t('tool.edit')} <code>${shortPath(input.file_path)}</code>${input.replace_all ? ` ${t('tool.everyOccurrence')}` : ''}</div>
      <div class="diff"><${Clipped} text=${input.old_string} lines=${8} /><${Clipped} text=${input.new_string || ''} lines=${8} /></div></div>`;
  }
  return html`<div class="tool-io"><div class="io-label">${t('tool.input')}</div><${Clipped} text=${JSON.stringify(input, null, 2)} language="json" /></div>`;
}

function ToolCard({ block, parentRunning }) {
  const [open, setOpen] = useState(false);
  const state = store.state;
  const result = state.toolResults.get(block.id);
  const permission = [...state.permissions.values()].find((p) => p.tool_use_id === block.id);
  const decided = state.decided.get(block.id);
  let status = 'running';
  let statusText = t('tool.status.running');
  if (result) {
    status = result.is_error ? 'error' : 'done';
    statusText = result.is_error ? t('tool.status.error') : t('tool.status.done');
  } else if (permission) {
    status = 'ask';
    statusText = t('tool.status.ask');
  } else if (decided === 'deny') {
    status = 'error';
    statusText = t('tool.status.denied');
  } else if (!parentRunning) {
    status = 'idle';
    statusText = '';
  }
  const text = result ? resultText(result.content) : '';
  return html`<div class=${`tool-card ${status}${open ? ' open' : ''}`} data-tool=${block.name}>
    <button class="tool-head" onClick=${() => setOpen(!open)} aria-expanded=${open}>
      <span class="chev"><${Icon} name="chevron" size=${12} /></span>
      <span class="tool-name">${block.name}</span>
      <span class="tool-key" title=${toolSummary(block.name, block.input)}>${toolSummary(block.name, block.input)}</span>
      <span class="tool-status">${status === 'running' ? html`<span class="spinner" />` : statusText}</span>
    </button>
    ${!open && result && result.is_error && text && html`<div class="tool-error-line">${text.split('\n')[0].slice(0, 200)}</div>`}
    ${open && html`<div class="tool-body">
      <${ToolInput} name=${block.name} input=${block.input} />
      ${result && html`<div class="tool-io"><div class="io-label">${result.is_error ? t('tool.error') : t('tool.result')}</div>
        <div class=${result.is_error ? 'result-error' : ''}><${Clipped} text=${text || t('tool.empty')} lines=${16} /></div></div>`}
    </div>`}
  </div>`;
}

function Thinking({ text }) {
  const [open, setOpen] = useState(false);
  return html`<div class=${`thinking${open ? ' open' : ''}`}>
    <button class="link" onClick=${() => setOpen(!open)}>${open ? t('thinking.hide') : t('thinking.show')}</button>
    ${open && html`<div class="thinking-body">${text}</div>`}
  </div>`;
}

function AssistantMessage({ item }) {
  const count = Math.max(item.content.length, item.stream.length);
  const blocks = [];
  for (let i = 0; i < count; i += 1) {
    const final = item.content[i];
    const partial = final ? null : item.stream[i];
    const block = final || partial;
    if (!block) continue;
    if (block.type === 'text') {
      if (!String(block.text || '').trim()) continue;
      blocks.push(html`<${Markdown} key=${i} text=${block.text} streaming=${!!partial && item.streaming} />`);
    } else if (block.type === 'thinking' || block.type === 'redacted_thinking') {
      blocks.push(html`<${Thinking} key=${i} text=${block.thinking || block.text || ''} />`);
    } else if (block.type === 'tool_use') {
      const input = block.input || safeJson(block.partialJson);
      blocks.push(html`<${ToolCard} key=${block.id || i} block=${{ ...block, input }} parentRunning=${isRunning()} />`);
    }
  }
  if (!blocks.length && !item.streaming) return null;
  return html`<div class=${`msg assistant${item.parent ? ' sub' : ''}${item.error ? ' api-error' : ''}`}>
    ${item.parent && html`<div class="sub-label">${t('msg.subagent')}</div>`}
    ${blocks.length ? blocks : html`<div class="typing"><span /><span /><span /></div>`}
  </div>`;
}

function safeJson(text) {
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    return {};
  }
}

function UserMessage({ item }) {
  return html`<div class=${`msg user${item.pending ? ' pending' : ''}`}>
    ${item.viewerContext && html`<div class="ctx-chip small" title=${item.viewerContext}><${Icon} name="target" size=${12} /><span class="ctx-text">${contextLabel(item.viewerContext)}</span></div>`}
    ${item.images && item.images.length > 0 && html`<div class="msg-images">
      ${item.images.map((img, i) => img.url
        ? html`<img key=${i} src=${img.url} alt=${t('msg.attachedImage')} />`
        : html`<span key=${i} class="img-placeholder">${t('msg.imageType', { type: img.media_type.split('/')[1] })}</span>`)}
    </div>`}
    ${item.content && html`<div class="bubble">${item.content}</div>`}
    ${item.pending && html`<div class="msg-meta">${store.state.connection.state === 'open' ? t('msg.sending') : t('msg.waitingConnection')}</div>`}
    ${!item.pending && html`<${TurnChanges} item=${item} store=${store} />`}
  </div>`;
}

function contextLabel(text) {
  const m = /<viewer-context([^>]*)>([\s\S]*?)<\/viewer-context>/.exec(text || '');
  if (!m) return t('msg.viewerContext');
  const attrs = {};
  m[1].replace(/([\w-]+)="([^"]*)"/g, (_, k, v) => { attrs[k] = v; return ''; });
  const body = m[2].replace(/\s+/g, ' ').trim();
  const where = attrs.file || attrs.slide || attrs.view || attrs.mode || '';
  const short = body.length > 60 ? `${body.slice(0, 59)}…` : body;
  return [where.split('/').pop(), short].filter(Boolean).join(' · ');
}

function ResultLine({ item }) {
  const d = item.data || {};
  // A result from the log may carry only the length of its text (the text
  // is the turn's last assistant message): that turn did produce one.
  const hadResult = !!d.result || (typeof d.result_length === 'number' && d.result_length > 0);
  const interrupted = d.subtype === 'error_during_execution' && !hadResult;
  const parts = [];
  if (typeof d.num_turns === 'number') parts.push(t('result.turns', { count: d.num_turns }));
  const cost = formatCost(d.total_cost_usd);
  if (cost) parts.push(cost);
  const took = formatDuration(d.duration_ms);
  if (took) parts.push(took);
  const label = d.is_error ? (interrupted ? t('result.stopped') : t('result.error')) : t('result.done');
  return html`<div class=${`result-line${d.is_error ? ' is-error' : ''}`} title=${d.usage ? t('result.tokens', { usage: JSON.stringify(d.usage) }) : ''}>
    <span class="result-label">${label}</span>${parts.map((p) => html`<span class="sep">·</span><span>${p}</span>`)}
  </div>`;
}

// Catalogue keys: [title, hint or null].
const ERROR_TITLES = {
  agent_not_found: ['error.agentNotFound', null],
  auth_failed: ['error.authFailed', null],
  agent_start_failed: ['error.agentStartFailed', 'error.agentStartFailed.hint'],
  no_agent: ['error.noAgent', null],
  watcher_failed: ['error.watcherFailed', null],
  api_retry: ['error.apiRetry', null],
  bad_message: ['error.badMessage', 'error.badMessage.hint'],
  internal: ['error.internal', 'error.internal.hint'],
  unknown_request: ['error.unknownRequest', null],
};

function ErrorCard({ item }) {
  const [titleKey, hintKey] = ERROR_TITLES[item.code] || ['tool.error', null];
  const title = t(titleKey);
  const hint = hintKey && t(hintKey);
  const warn = item.code === 'api_retry' || item.code === 'unknown_request';
  return html`<div class=${`notice ${warn ? 'warn' : 'error'}`} data-code=${item.code}>
    <div class="notice-title"><${Icon} name="warn" size=${14} />${title}</div>
    <div class="notice-body">${item.message}</div>
    ${hint && !(item.message || '').includes(hint) && html`<div class="notice-hint">${hint}</div>`}
  </div>`;
}

/** A note's text: a string, or a function translating it now (lib/store.js). */
function shown(text) {
  return typeof text === 'function' ? text() : text;
}

function Note({ item }) {
  const [open, setOpen] = useState(false);
  return html`<div class=${`notice ${item.tone || 'quiet'}`}>
    <div class="notice-title">${item.tone === 'warn' && html`<${Icon} name="warn" size=${14} />`}${shown(item.text)}</div>
    ${item.hint && html`<div class="notice-hint">${shown(item.hint)}</div>`}
    ${item.detail && html`<button class="link" onClick=${() => setOpen(!open)}>${open ? t('note.hideOutput') : t('note.showOutput')}</button>
      ${open && html`<pre class="stderr">${item.detail}</pre>`}`}
  </div>`;
}

function OrphanResult({ item }) {
  if (store.state.toolUses.has(item.toolUseId)) return null;
  const result = store.state.toolResults.get(item.toolUseId);
  if (!result) return null;
  return html`<div class="msg assistant"><${ToolCard} block=${{ id: item.toolUseId, name: t('tool.orphanResult'), input: {} }} parentRunning=${false} /></div>`;
}

function ChatItem({ item }) {
  switch (item.kind) {
    case 'user': return html`<${UserMessage} item=${item} />`;
    case 'assistant': return html`<${AssistantMessage} item=${item} />`;
    case 'result': return html`<${ResultLine} item=${item} />`;
    case 'error': return html`<${ErrorCard} item=${item} />`;
    case 'note': return html`<${Note} item=${item} />`;
    case 'orphan_result': return html`<${OrphanResult} item=${item} />`;
    case 'rewind': return html`<${RewindNote} item=${item} store=${store} />`;
    default: return null;
  }
}

// --- the chat ---------------------------------------------------------------

function EmptyState() {
  const mode = ui.config.mode;
  const commands = (mode.viewerApi && mode.viewerApi.commands) || [];
  return html`<div class="empty">
    <div class="empty-mark" />
    <h2>${localized(mode.displayName) || mode.name}</h2>
    <p>${localized(mode.description)}</p>
    <p class="muted">${t('empty.hint')}${commands.length ? ` ${t('empty.shortcuts')}` : ''}</p>
  </div>`;
}

// Older messages load this close (px) to the top of the list.
const EARLIER_MARGIN = 120;

function loadEarlier() {
  // While disconnected nothing is asked (the page would not come); the
  // list asks again once the connection is back, if it is still at the top.
  if (store.state.connection.state !== 'open') return;
  const before = store.requestHistoryPage();
  if (before == null) return;
  if (!ui.socket.send({ type: 'history_page', before })) store.cancelHistoryPage();
}

function EarlierMessages() {
  const state = store.state;
  if (!state.historyHasMore && !state.historyError) return null;
  const loading = state.historyRequested != null;
  // One button throughout (its text changes), so keyboard focus stays on it.
  return html`<div class="earlier">
    ${state.historyError && html`<div class="earlier-error" role="alert"><${Icon} name="warn" size=${13} />${state.historyError}</div>`}
    ${state.historyHasMore && html`<button class="link load-earlier" onClick=${loadEarlier}
        aria-disabled=${loading ? 'true' : 'false'} aria-busy=${loading ? 'true' : 'false'}>
      ${loading ? html`<span class="spinner" />${t('history.loading')}` : state.historyError ? t('history.retry') : t('history.load')}
    </button>`}
  </div>`;
}

/** The message rows on screen and where they are, to keep them there. The
 *  first of them still in the list after an update is the anchor (a tool
 *  result shown on its own leaves when its tool call arrives). */
function scrollAnchors(list) {
  const top = list.getBoundingClientRect().top;
  const bottom = top + list.clientHeight;
  const anchors = [];
  for (const child of list.children) {
    if (child.classList.contains('earlier')) continue;
    const box = child.getBoundingClientRect();
    if (box.top >= bottom) break;
    if (box.bottom > top) anchors.push({ node: child, offset: box.top - top });
  }
  return anchors;
}

function MessageList() {
  const state = store.state;
  const ref = useRef(null);
  const stick = useRef(true);
  const prepends = useRef(state.historyPrepends);
  const anchors = useRef(null);
  const [showJump, setShowJump] = useState(false);
  const nearTop = () => {
    const el = ref.current;
    return !!el && el.scrollTop <= EARLIER_MARGIN;
  };
  const onScroll = useCallback(() => {
    const el = ref.current;
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
    stick.current = atBottom;
    setShowJump(!atBottom);
    if (nearTop() && store.state.historyHasMore && !store.state.historyError) loadEarlier();
  }, []);
  // Older messages are about to be put in front: remember which row is at
  // the top of the view (the DOM is still the old one while rendering).
  if (state.historyPrepends !== prepends.current) {
    prepends.current = state.historyPrepends;
    anchors.current = ref.current ? scrollAnchors(ref.current) : null;
  }
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const kept = anchors.current && anchors.current.find((a) => a.node.isConnected);
    anchors.current = null;
    if (kept) {
      // The row the person was reading stays where it was.
      const top = el.getBoundingClientRect().top;
      el.scrollTop += kept.node.getBoundingClientRect().top - top - kept.offset;
    } else if (stick.current) {
      el.scrollTop = el.scrollHeight;
    }
    // At the top (or nothing to scroll yet) with older messages in the log:
    // fetch them without waiting for a scroll that cannot happen.
    if (state.historyLoaded && state.historyHasMore && !state.historyError && nearTop()) loadEarlier();
  });
  const items = state.items;
  const last = items[items.length - 1];
  const waiting = isRunning() && !(last && last.kind === 'assistant' && last.streaming);
  return html`<div class="messages-wrap">
    <${SavingBanner} saving=${state.session && state.session.saving} />
    <div class="messages" ref=${ref} onScroll=${onScroll} role="log" aria-live="polite">
      <${EarlierMessages} />
      ${!hasAgent() && html`<${NoAgentBanner} />`}
      ${items.length === 0 && state.historyLoaded && html`<${EmptyState} />`}
      ${items.map((item) => html`<${ChatItem} key=${item.key} item=${item} />`)}
      ${waiting && html`<div class="working"><span class="spinner" />${state.permissions.size ? t('working.permission') : state.status === 'compacting' ? t('working.compacting') : t('working.busy')}</div>`}
    </div>
    ${showJump && html`<button class="jump" onClick=${() => { stick.current = true; ref.current.scrollTop = ref.current.scrollHeight; }}><${Icon} name="down" size=${14} /> ${t('chat.latest')}</button>`}
  </div>`;
}

function NoAgentBanner() {
  const session = store.state.session || {};
  // The server's reason is English (the terminal's words, with the exact
  // restart options); a page in another language says it in its own words.
  const reason = getLocale() === 'en' && session.no_agent_reason
    ? session.no_agent_reason : `${t('noAgent.reason')} ${t('noAgent.restart')}`;
  return html`<div class="notice info no-agent">
    <div class="notice-title">${t('error.noAgent')}</div>
    <div class="notice-body">${reason}</div>
  </div>`;
}

function PermissionCard({ request }) {
  const [note, setNote] = useState('');
  const [denying, setDenying] = useState(false);
  return html`<div class="permission" data-request=${request.request_id}>
    <div class="perm-head">
      <span class="perm-badge">${t('perm.badge')}</span>
      <span class="perm-title">${request.tool_name}${request.description ? html` · <span class="muted">${request.description}</span>` : ''}</span>
    </div>
    <${ToolInput} name=${request.tool_name} input=${request.input} />
    ${denying && html`<input class="perm-note" placeholder=${t('perm.denyNote')} value=${note}
      onInput=${(e) => setNote(e.target.value)} onKeyDown=${(e) => { if (e.key === 'Enter') shell.answerPermission(request, 'deny', note); }} autofocus />`}
    <div class="perm-actions">
      ${denying
        ? html`<button class="btn" onClick=${() => setDenying(false)}>${t('perm.back')}</button>
               <button class="btn danger" onClick=${() => shell.answerPermission(request, 'deny', note)}>${t('perm.deny')}</button>`
        : html`<button class="btn" onClick=${() => setDenying(true)}>${t('perm.denyMore')}</button>
               <button class="btn primary allow" onClick=${() => shell.answerPermission(request, 'allow')}>${t('perm.allow')}</button>`}
    </div>
  </div>`;
}

function PermissionDock() {
  const requests = [...store.state.permissions.values()];
  if (!requests.length) return null;
  return html`<div class="perm-dock">${requests.map((r) => html`<${PermissionCard} key=${r.request_id} request=${r} />`)}</div>`;
}

function readImage(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onerror = () => reject(reader.error);
    reader.onload = () => resolve(String(reader.result));
    reader.readAsDataURL(file);
  });
}

async function shrink(dataUrl) {
  const img = new Image();
  img.src = dataUrl;
  await img.decode();
  const scale = Math.min(1, 2048 / Math.max(img.naturalWidth, img.naturalHeight));
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(img.naturalWidth * scale);
  canvas.height = Math.round(img.naturalHeight * scale);
  canvas.getContext('2d').drawImage(img, 0, 0, canvas.width, canvas.height);
  return canvas.toDataURL('image/jpeg', 0.86);
}

async function toAttachment(file) {
  if (!ACCEPTED_IMAGES.includes(file.type)) throw new Error(t('composer.badImage', { name: file.name || t('composer.thisFile') }));
  let url = await readImage(file);
  if (file.size > MAX_IMAGE_BYTES && file.type !== 'image/gif') url = await shrink(url);
  const [head, data] = url.split(',', 2);
  const media_type = head.slice(5).split(';')[0];
  return { media_type, data, url, name: file.name || t('composer.pastedImage') };
}

function Composer() {
  const state = store.state;
  const [draft, setDraft] = useState(() => sessionStorage.getItem('pneuma.draft') || '');
  const [images, setImages] = useState([]);
  const [problem, setProblem] = useState(null);
  const [dragOver, setDragOver] = useState(false);
  const textarea = useRef(null);
  const fileInput = useRef(null);
  const running = isRunning();
  const agent = hasAgent();
  const commands = (ui.config.mode.viewerApi && ui.config.mode.viewerApi.commands) || [];

  useEffect(() => { sessionStorage.setItem('pneuma.draft', draft); }, [draft]);
  useLayoutEffect(() => {
    const el = textarea.current;
    if (!el) return;
    el.style.height = 'auto';
    el.style.height = `${Math.min(el.scrollHeight, 240)}px`;
  }, [draft]);

  const addFiles = async (files) => {
    setProblem(null);
    for (const file of files) {
      try {
        const attachment = await toAttachment(file);
        setImages((list) => [...list, attachment].slice(0, 20));
      } catch (error) {
        setProblem(error.message);
      }
    }
  };

  const submit = () => {
    if (!agent) return;
    if (shell.send(draft, images)) {
      setDraft('');
      setImages([]);
      setProblem(null);
    }
  };

  const onKeyDown = (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      submit();
    }
  };

  const onPaste = (e) => {
    const files = [...(e.clipboardData ? e.clipboardData.files : [])].filter((f) => f.type.startsWith('image/'));
    if (files.length) {
      e.preventDefault();
      addFiles(files);
    }
  };

  const onDrop = (e) => {
    e.preventDefault();
    setDragOver(false);
    const files = [...(e.dataTransfer ? e.dataTransfer.files : [])];
    if (files.length) addFiles(files);
  };

  const selection = ui.selection;
  return html`<div class=${`composer-wrap${dragOver ? ' drag' : ''}`}
      onDragOver=${(e) => { if (e.dataTransfer && [...e.dataTransfer.types].includes('Files')) { e.preventDefault(); setDragOver(true); } }}
      onDragLeave=${() => setDragOver(false)} onDrop=${onDrop}>
    ${commands.length > 0 && html`<div class="commands">
      ${commands.map((c) => html`<button key=${c.id} class="command" data-command=${c.id} disabled=${!agent}
        title=${localized(c.description) || c.prompt} onClick=${() => shell.send(c.prompt)}><${Icon} name="bolt" size=${12} />${localized(c.label)}</button>`)}
    </div>`}
    ${selection != null && html`<div class="ctx-row">
      <span class="ctx-chip" title=${t('composer.selectionTitle')}>
        <${Icon} name="target" size=${12} /><span class="ctx-text">${selectionLabel(selection)}</span>
        <button class="chip-x" aria-label=${t('composer.removeSelection')} onClick=${() => shell.clearSelection()}><${Icon} name="x" size=${12} /></button>
      </span>
    </div>`}
    ${images.length > 0 && html`<div class="attachments">
      ${images.map((img, i) => html`<span class="thumb" key=${i} title=${img.name}><img src=${img.url} alt=${img.name} />
        <button class="chip-x" aria-label=${t('composer.removeImage')} onClick=${() => setImages(images.filter((_, j) => j !== i))}><${Icon} name="x" size=${11} /></button></span>`)}
    </div>`}
    ${problem && html`<div class="composer-problem">${problem}</div>`}
    <div class=${`composer${agent ? '' : ' disabled'}`}>
      <button class="icon-btn" title=${t('composer.attach')} disabled=${!agent} onClick=${() => fileInput.current.click()}><${Icon} name="clip" /></button>
      <input type="file" accept=${ACCEPTED_IMAGES.join(',')} multiple hidden ref=${fileInput}
        onChange=${(e) => { addFiles([...e.target.files]); e.target.value = ''; }} />
      <textarea ref=${textarea} rows="1" value=${draft} disabled=${!agent}
        placeholder=${agent ? (running ? t('composer.queue') : t('composer.placeholder')) : t('error.noAgent')}
        onInput=${(e) => setDraft(e.target.value)} onKeyDown=${onKeyDown} onPaste=${onPaste} aria-label=${t('composer.message')} />
      ${running
        ? html`<button class="send stop" title=${t('composer.interrupt')} onClick=${() => shell.interrupt()} disabled=${ui.stopping}>
            <${Icon} name="stop" size=${14} /><span>${ui.stopping ? t('composer.stopping') : t('composer.stop')}</span></button>`
        : html`<button class="send" title=${t('composer.send')} disabled=${!agent || (!draft.trim() && !images.length)} onClick=${submit}><${Icon} name="send" size=${15} /></button>`}
    </div>
    <div class="composer-hint">${running ? t('composer.hintEsc') : ''}${t('composer.hint')}</div>
  </div>`;
}

function ChatPanel({ floating, onClose }) {
  return html`<section class=${`chat${floating ? ' floating' : ''}`} aria-label=${t('chat.label')}>
    ${floating && html`<div class="float-head"><span>${t('chat.label')}</span><button class="icon-btn" aria-label=${t('chat.hide')} onClick=${onClose}><${Icon} name="x" size=${14} /></button></div>`}
    <${ConversationMenu} store=${store} running=${isRunning()} send=${(message) => ui.socket.send(message, { queue: true })} />
    <${MessageList} />
    <${PermissionDock} />
    <${Composer} />
  </section>`;
}

// --- header ---------------------------------------------------------------

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
  if (conn.state === 'reconnecting') {
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


function Header({ chatHidden, toggleChat }) {
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
    <${BrowserTwin} />
    <${StatusPill} />
    <${ExportMenu} />
    <${ModelMenu} />
    <${LanguageSwitch} />
    <button class="icon-btn" title=${chatHidden ? t('chat.showTitle') : t('chat.hideTitle')} onClick=${toggleChat} aria-pressed=${!chatHidden}>
      <${Icon} name=${mode.layout === 'app' ? 'chat' : 'sidebar'} />
    </button>
  </header>`;
}

// --- dialogs ----------------------------------------------------------------

function DetailList({ details }) {
  if (details == null) return null;
  if (typeof details !== 'object') return html`<p>${String(details)}</p>`;
  const hidden = new Set(['taskId', 'clientId']); // ids for the machines, not the person
  const entries = Object.entries(details).filter(([k, v]) => !hidden.has(k) && !(Array.isArray(v) && v.length === 0) && v != null && v !== '');
  const titles = {
    delete: t('details.delete'), write: t('details.write'), unusualPatterns: t('details.unusualPatterns'),
    client: t('details.client'), url: t('details.url'), actions: t('details.actions'), tool: t('details.tool'), input: t('tool.input'),
  };
  return html`<div class="details">${entries.map(([key, value]) => html`<div class=${`detail detail-${key}`}>
    <div class="detail-key">${titles[key] || key}${Array.isArray(value) ? ` (${value.length})` : ''}</div>
    ${Array.isArray(value)
      ? html`<ul class="detail-list">${value.slice(0, 200).map((v) => html`<li>${typeof v === 'string' ? v : JSON.stringify(v)}</li>`)}${value.length > 200 ? html`<li class="muted">${t('details.more', { count: value.length - 200 })}</li>` : ''}</ul>`
      : html`<div class="detail-value">${typeof value === 'string' ? value : JSON.stringify(value, null, 2)}</div>`}
  </div>`)}</div>`;
}

// A write_to_file dry run: {type: 'line', hunks: [{startOld, lenOld, startNew, lenNew, linesOld, linesNew}]}.
function DiffView({ path, diff }) {
  const hunks = (diff && Array.isArray(diff.hunks)) ? diff.hunks : [];
  const row = (cls, mark, n, text) => html`<div class=${`diff-line ${cls}`}><span class="diff-num">${n}</span><span class="diff-mark">${mark}</span><span class="diff-text">${text}</span></div>`;
  return html`<div class="details"><div class="detail detail-diff">
    <div class="detail-key">${path || t('diff.file')}</div>
    <div class="diff-view">${hunks.length === 0 ? html`<div class="diff-line muted">${t('diff.noChange')}</div>` : hunks.slice(0, 200).map((h) => html`<div class="diff-hunk">
      <div class="diff-line diff-head">@@ −${h.startOld},${h.lenOld} +${h.startNew},${h.lenNew} @@</div>
      ${(h.linesOld || []).map((t, i) => row('diff-del', '−', h.startOld + i, t))}
      ${(h.linesNew || []).map((t, i) => row('diff-add', '+', h.startNew + i, t))}
    </div>`)}</div>
  </div></div>`;
}

function ConfirmDialog() {
  const confirmation = store.state.confirmations[0];
  const approve = useRef(null);
  useEffect(() => { if (confirmation && approve.current) approve.current.focus(); }, [confirmation && confirmation.request_id]);
  if (!confirmation) return null;
  const kindKey = { scaffold: 'confirm.scaffold', write: 'confirm.write', question: 'confirm.question', viewer: 'confirm.viewer', browser_task: 'confirm.browserTask' }[confirmation.kind] || 'confirm.viewer';
  const kindTitle = t(kindKey);
  const danger = confirmation.details && Array.isArray(confirmation.details.delete) && confirmation.details.delete.length > 0;
  // A write_to_file dry run (pneuma/tools/confirm.py): the diff, Apply / Reject.
  const isWrite = confirmation.kind === 'write' && confirmation.details && confirmation.details.diff && typeof confirmation.details.diff === 'object';
  return html`<div class="modal-backdrop">
    <div class=${`modal${isWrite ? ' modal-wide' : ''}`} role="dialog" aria-modal="true" aria-labelledby="confirm-title" data-kind=${confirmation.kind}>
      <h2 id="confirm-title">${kindTitle}</h2>
      <p class="modal-summary">${confirmation.summary}</p>
      ${isWrite ? html`<${DiffView} path=${confirmation.details.path} diff=${confirmation.details.diff} />` : html`<${DetailList} details=${confirmation.details} />`}
      <div class="modal-actions">
        <button class="btn" onClick=${() => shell.answerConfirmation(confirmation, false)}>${isWrite ? t('confirm.reject') : t('confirm.decline')}</button>
        <button class=${`btn ${danger ? 'danger' : 'primary'}`} ref=${approve} onClick=${() => shell.answerConfirmation(confirmation, true)}>${isWrite ? t('confirm.apply') : t('confirm.approve')}</button>
      </div>
    </div>
  </div>`;
}

// --- browser clients (--backend native) --------------------------------------

function BrowserPicker() {
  const { selection } = store.state.browser;
  const clients = store.state.browser.clients.filter((c) => c.kind !== 'viewer'); // tabs like this one
  const [problem, setProblem] = useState(null);
  if (!selection) return null;
  const pick = async (clientId) => {
    setProblem(null);
    // The socket when it is up (errors come back on it); HTTP otherwise.
    if (ui.socket.send({ type: 'select_browser', clientId })) return;
    try {
      await api.json('/api/extension/select', { method: 'POST', json: { clientId } });
    } catch (error) {
      setProblem(error.message);
    }
  };
  const about = (c) => [c.metadata && c.metadata.kind, c.metadata && c.metadata.browserVersion].filter(Boolean).join(' · ');
  return html`<div class="modal-backdrop">
    <div class="modal" role="dialog" aria-modal="true" aria-labelledby="picker-title" data-kind="browser-picker">
      <h2 id="picker-title">${t('picker.title')}</h2>
      <p class="modal-summary">${t('picker.summary')}</p>
      ${clients.length === 0 && html`<p class="muted">${t('picker.none')}
        <code>pneuma browser-client --server ${location.origin} --token …</code></p>`}
      <ul class="browser-clients">${clients.map((c) => html`<li>
        <button class=${`browser-client${c.online ? '' : ' offline'}`} disabled=${!c.online} onClick=${() => pick(c.clientId)}>
          <span class="dot" /><span class="client-name">${c.name}</span>
          <span class="muted">${c.online ? t('picker.online') : t('picker.offline')}${about(c) ? ` · ${about(c)}` : ''}</span>
        </button></li>`)}</ul>
      ${problem && html`<p class="muted">${problem}</p>`}
      <div class="modal-actions"><button class="btn" onClick=${() => shell.interrupt()}>${t('picker.cancel')}</button></div>
    </div>
  </div>`;
}

function BrowserTwin() {
  const { selectedClientId, twins, clients } = store.state.browser;
  const twin = selectedClientId && twins[selectedClientId];
  if (!twin || !twin.tabs || twin.tabs.length === 0) return null;
  const client = clients.find((c) => c.clientId === selectedClientId);
  const online = !client || client.online;
  return html`<details class=${`browser-twin${online ? '' : ' offline'}`}>
    <summary title=${t('twin.title')}><span class="dot" />${client ? client.name : selectedClientId}${online ? '' : ` ${t('twin.offline')}`} · ${t('twin.tabs', { count: twin.tabs.length })}</summary>
    <ul>${twin.tabs.map((t) => html`<li class=${t.id === twin.activeTabId ? 'active' : ''} title=${t.url}>
      <span class="tab-title">${t.title || t.url}</span><span class="tab-url">${t.url}</span></li>`)}</ul>
  </details>`;
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
  const [chatHidden, setChatHidden] = useState(() => localStorage.getItem(`pneuma.chatHidden.${mode.layout}`) === '1');
  const [width, setWidthState] = useState(() => Number(localStorage.getItem('pneuma.chatWidth')) || 420);
  const viewerRef = useRef(null);
  const setWidth = (w) => {
    setWidthState(w);
    localStorage.setItem('pneuma.chatWidth', String(Math.round(w)));
  };
  const toggleChat = () => {
    const next = !chatHidden;
    setChatHidden(next);
    localStorage.setItem(`pneuma.chatHidden.${mode.layout}`, next ? '1' : '0');
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
      },
    });
    ui.host = host;
    host.start().then(() => {
      ui.viewerReady = true;
      if (host.loadError) ui.viewerNotice = host.loadError;
      store.notify();
    });
    return () => host.destroy();
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

  const title = `${isRunning() ? '● ' : ''}${localized(mode.displayName) || mode.name} · Pneuma`;
  if (document.title !== title) document.title = title;

  return html`<div class=${`shell layout-${appLayout ? 'app' : 'editor'}${chatHidden ? ' chat-hidden' : ''}`}
      style=${appLayout ? '' : `--chat-width: ${width}px`}>
    <${Header} chatHidden=${chatHidden} toggleChat=${toggleChat} />
    <main class="workspace">
      <section class="viewer-panel" aria-label=${t('layout.viewer')}>
        ${ui.viewerNotice && html`<div class="viewer-notice"><${Icon} name="warn" size=${14} />${ui.viewerNotice}
          <button class="chip-x" aria-label=${t('layout.dismiss')} onClick=${() => { ui.viewerNotice = null; store.notify(); }}><${Icon} name="x" size=${12} /></button></div>`}
        ${!ui.viewerReady && html`<div class="viewer-loading"><span class="spinner" />${t('layout.loadingViewer')}</div>`}
        <div class="viewer-root" ref=${viewerRef} />
      </section>
      ${!appLayout && !chatHidden && html`<${Splitter} width=${width} setWidth=${setWidth} />`}
      ${!chatHidden && html`<${ChatPanel} floating=${appLayout} onClose=${toggleChat} />`}
      ${appLayout && chatHidden && html`<button class=${`chat-fab${isRunning() ? ' busy' : ''}`} onClick=${toggleChat} aria-label=${t('chat.open')}><${Icon} name="chat" size=${20} /></button>`}
    </main>
    <${ConfirmDialog} />
    <${BrowserPicker} />
  </div>`;
}

// --- start -----------------------------------------------------------------

/** --backend native: the clients, the selection and its twin as they are now
 *  (the socket only brings changes, and history does not keep them). */
async function loadBrowserClients() {
  try {
    const listing = await api.json('/api/extension/extension-list');
    const browser = store.state.browser;
    if (!browser.clients.length) browser.clients = listing.clients || [];
    browser.selectedClientId = browser.selectedClientId || listing.selectedClientId || null;
    if (browser.selectedClientId && !browser.twins[browser.selectedClientId]) {
      const { clientId, twin } = await api.json(`/api/extension/twin?clientId=${encodeURIComponent(browser.selectedClientId)}`);
      if (!browser.twins[clientId]) browser.twins = { ...browser.twins, [clientId]: twin };
    }
    store.notify();
  } catch (error) {
    console.warn('could not load the browser clients', error);
  }
}

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
    onMessage: onSocketMessage,
    onState: (connection) => store.setConnection(connection),
  });

  // Let the server trim its replay buffer now and then.
  setInterval(() => {
    if (store.state.lastSeq) ui.socket.send({ type: 'session_ack', last_seq: store.state.lastSeq });
  }, 15_000);

  if (info.backend === 'native') loadBrowserClients();

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
