// The chat: the message list and its items (assistant text, tool cards,
// results, notes, errors), the permission prompts docked under it, and the
// panel that holds them with the conversation menu and the composer.

import { html, Component, useState, useLayoutEffect, useRef, useCallback } from '../vendor/preact-htm.js';
import { ConversationMenu } from './conversations.js';
import { api, localized } from './viewer-host.js';
import { renderMarkdown, highlight, languageOf } from './markdown.js';
import { t, getLocale, formatCost, formatDuration } from './i18n.js';
import { TurnChanges, RewindNote } from './rewind.js';
import { RepairLabel, TurnChecksBadge } from './turn-checks.js';
import { SavingBanner } from './saving-banner.js';
import { Icon, hasAgent, isRunning, shell, store, ui } from './shell-state.js';
import { Composer } from './composer.js';
import { ReviewList } from './pins.js';
import { QueuedFollowUps, followUps } from './follow-ups.js';
import { asksThePerson, questionCardFor } from './question-cards.js';
import { UserBubble, branchesReceive } from './branches.js';

function Markdown({ text, streaming }) {
  return html`<div class=${`md${streaming ? ' streaming' : ''}`} dangerouslySetInnerHTML=${{ __html: renderMarkdown(text, { streaming }) }} />`;
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
    statusText = asksThePerson(permission) ? t('cards.status') : t('tool.status.ask');
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
    ${result && html`<${WholeMessage} preview=${result.preview} />`}
    ${open && html`<div class="tool-body">
      <${ToolInput} name=${block.name} input=${block.input} />
      ${result && html`<div class="tool-io"><div class="io-label">${result.is_error ? t('tool.error') : t('tool.result')}</div>
        <div class=${result.is_error ? 'result-error' : ''}><${Clipped} text=${text || t('tool.empty')} lines=${16} /></div></div>`}
    </div>`}
  </div>`;
}

/** A message a page of history gave as a preview (too large for the page):
 *  its whole text on request (lib/store.js, `history_message`). */
function WholeMessage({ preview }) {
  if (!preview) return null;
  const loading = store.state.wholeRequested.has(preview.row);
  const size = `${Math.max(1, Math.round(preview.bytes / 1024))} KB`;
  const ask = () => {
    if (store.state.connection.state !== 'open' || !store.requestWhole(preview.row)) return;
    if (!ui.socket.send({ type: 'history_message', row: preview.row })) store.state.wholeRequested.delete(preview.row);
  };
  return html`<button class="link show-whole" onClick=${ask} aria-busy=${loading ? 'true' : 'false'}>
    ${loading ? t('history.wholeLoading') : t('history.whole', { size })}
  </button>`;
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
  if (!blocks.length && !item.streaming && !item.preview) return null;
  return html`<div class=${`msg assistant${item.parent ? ' sub' : ''}${item.error ? ' api-error' : ''}`}>
    ${item.parent && html`<div class="sub-label">${t('msg.subagent')}</div>`}
    ${blocks.length ? blocks : !item.preview && html`<div class="typing"><span /><span /><span /></div>`}
    <${WholeMessage} preview=${item.preview} />
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
    <${RepairLabel} item=${item} />
    <${UserBubble} item=${item} />
    <${WholeMessage} preview=${item.preview} />
    ${item.pending && html`<div class="msg-meta">${store.state.connection.state === 'open' ? t('msg.sending') : t('msg.waitingConnection')}</div>`}
    ${!item.pending && html`<${TurnChanges} item=${item} store=${store} />`}
    ${!item.pending && html`<${TurnChecksBadge} item=${item} />`}
  </div>`;
}

function contextLabel(text) {
  const review = /^<viewer-review pins="(\d+)"/.exec(text || ''); // a review of pins (lib/pins.js)
  if (review) return t('pins.chatLabel', { count: Number(review[1]) });
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
  if (typeof d.num_turns === 'number') parts.push(t('result.steps', { count: d.num_turns }));
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
  E_CONFLICT: ['queue.taken', null], // a follow-up the agent already took (follow-ups.js)
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

// --- what re-renders while an answer streams ------------------------------
//
// A streamed delta changes one item, the streaming message (the store marks
// it with a new `rev`). So each row of the chat draws again only when its
// own item changed, or when something every row may show changed: any
// socket message but a stream event (a tool result, a permission, the
// status, a checkpoint's changes, a rewind…), the language, the connection.
// A delta therefore costs the same in a long chat as in a fresh one
// (benchmarks/bench_stream_paint.py), instead of drawing every earlier
// message, its Markdown and its code again.

let shared = 0; // counts the socket messages that may change any row

/** Every socket message the store has applied (app.js): the chat's own state. */
export function chatReceive(store, message) {
  if (message.type !== 'stream_event') shared += 1;
  followUps.receive(store, message);
  branchesReceive(message);
}

function sharedState() {
  const state = store.state;
  return `${shared}|${getLocale()}|${state.connection.state}|${state.status}`;
}

class ChatRow extends Component {
  shouldComponentUpdate(next) {
    return next.item !== this.props.item || next.rev !== this.props.rev || next.shared !== this.props.shared;
  }

  render({ item }) {
    ui.chatRenders = (ui.chatRenders || 0) + 1; // read by the benchmark and the browser tests
    return html`<${ChatItem} item=${item} />`;
  }
}

// Rows are drawn in groups of consecutive items (by when the store made
// them, from the number in their key: a page of older messages, made after
// the rows it goes before, starts groups of its own, so that the groups
// already shown keep their keys and their elements), each in an
// element of its own, so that a delta diffs and lays out one group of rows,
// not one row per message in the chat: a group is skipped whole unless one
// of its items, their number or the shared state changed, and the browser
// keeps the layout of the groups whose rows did not change.
const GROUP_SIZE = 24;

function groupsOf(items) {
  const groups = [];
  let current = null;
  let made = -1;
  for (const item of items) {
    const number = Number(/\d+$/.exec(item.key)?.[0] || 0);
    const id = Math.floor(number / GROUP_SIZE);
    if (!current || current.id !== id || number < made) {
      current = { id, key: null, items: [] };
      groups.push(current);
    }
    made = number;
    current.items.push(item);
    // Named after its first row that stays: a tool result shown on its own
    // leaves when its call is loaded, a message being sent when it is queued.
    if (!current.key && item.kind !== 'orphan_result' && !item.pending) current.key = `g${id}:${item.key}`;
  }
  for (const group of groups) group.key = group.key || `g${group.id}:${group.items[0].key}`;
  return groups;
}

/** The groups the chat draws: from the one holding the store's first drawn
 *  item (lib/store.js, DRAWN_AT_ONCE), whole, so that drawing older items
 *  adds groups in front and never changes a group already shown (its
 *  element, and the row the person reads in it, stays). */
function drawnGroups(state) {
  const groups = groupsOf(state.items);
  const first = state.firstDrawn;
  const from = first ? groups.findIndex((group) => group.items.includes(first)) : 0;
  return from > 0 ? groups.slice(from) : groups;
}

class RowGroup extends Component {
  shouldComponentUpdate(next) {
    const seen = this.seen;
    if (next.shared !== this.props.shared || next.items.length !== seen.length) return true;
    return next.items.some((item, i) => item !== seen[i].item || item.rev !== seen[i].rev);
  }

  render({ items, shared }) {
    this.seen = items.map((item) => ({ item, rev: item.rev }));
    return html`<div class="msg-group">
      ${items.map((item) => html`<${ChatRow} key=${item.key} item=${item} rev=${item.rev} shared=${shared} />`)}
    </div>`;
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

/** Whether there is anything older than what the chat draws. */
function hasEarlier() {
  const state = store.state;
  return state.historyHasMore || (state.firstDrawn != null && state.items.indexOf(state.firstDrawn) > 0);
}

function loadEarlier() {
  // What the tab already has is drawn first, a chunk at a time.
  if (store.drawEarlier()) return;
  // While disconnected nothing is asked (the page would not come); the
  // list asks again once the connection is back, if it is still at the top.
  if (store.state.connection.state !== 'open') return;
  const before = store.requestHistoryPage();
  if (before == null) return;
  if (!ui.socket.send({ type: 'history_page', before })) store.cancelHistoryPage();
}

function EarlierMessages() {
  const state = store.state;
  const earlier = hasEarlier();
  if (!earlier && !state.historyError) return null;
  const loading = state.historyRequested != null;
  // One button throughout (its text changes), so keyboard focus stays on it.
  return html`<div class="earlier">
    ${state.historyError && html`<div class="earlier-error" role="alert"><${Icon} name="warn" size=${13} />${state.historyError}</div>`}
    ${earlier && html`<button class="link load-earlier" onClick=${loadEarlier}
        aria-disabled=${loading ? 'true' : 'false'} aria-busy=${loading ? 'true' : 'false'}>
      ${loading ? html`<span class="spinner" />${t('history.loading')}` : state.historyError ? t('history.retry') : t('history.load')}
    </button>`}
  </div>`;
}

/** The message rows on screen and where they are, to keep them there. The
 *  first of them still in the list after an update is the anchor (a tool
 *  result shown on its own leaves when its tool call arrives). */
function* rows(list) {
  // Only the messages' rows: a banner above them (no agent) or the
  // queue below never moves with the conversation, so it anchors nothing.
  for (const child of list.children) {
    if (child.classList.contains('msg-group')) yield* child.children;
  }
}

function scrollAnchors(list) {
  const top = list.getBoundingClientRect().top;
  const bottom = top + list.clientHeight;
  const anchors = [];
  for (const child of rows(list)) {
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
    if (nearTop() && hasEarlier() && !store.state.historyError) loadEarlier();
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
    if (state.historyLoaded && hasEarlier() && !state.historyError && nearTop()) loadEarlier();
  });
  const items = state.items;
  const rowsShare = sharedState();
  ui.chatShared = rowsShare; // read with chatRenders: a change of it redraws every row, as it should
  const last = items[items.length - 1];
  const waiting = isRunning() && !(last && last.kind === 'assistant' && last.streaming);
  return html`<div class="messages-wrap">
    <${SavingBanner} saving=${state.session && state.session.saving} />
    <div class="messages" ref=${ref} onScroll=${onScroll} role="log" aria-live="polite">
      <${EarlierMessages} />
      ${!hasAgent() && html`<${NoAgentBanner} />`}
      ${items.length === 0 && state.historyLoaded && html`<${EmptyState} />`}
      ${drawnGroups(state).map((group) => html`<${RowGroup} key=${group.key} items=${group.items} shared=${rowsShare} />`)}
      ${waiting && html`<div class="working"><span class="spinner" />${state.permissions.size ? ([...state.permissions.values()].some(asksThePerson) ? t('cards.waiting') : t('working.permission')) : state.status === 'compacting' ? t('working.compacting') : t('working.busy')}</div>`}
      <${QueuedFollowUps} send=${(message) => ui.socket.send(message, { queue: true })} />
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
  return html`<div class="perm-dock">${requests.map((r) => questionCardFor(r, PermissionCard)
    || html`<${PermissionCard} key=${r.request_id} request=${r} />`)}</div>`;
}

export function ChatPanel({ floating, onClose }) {
  return html`<section class=${`chat${floating ? ' floating' : ''}`} aria-label=${t('chat.label')}>
    ${floating && html`<div class="float-head"><span>${t('chat.label')}</span><button class="icon-btn" aria-label=${t('chat.hide')} onClick=${onClose}><${Icon} name="x" size=${14} /></button></div>`}
    <${ConversationMenu} store=${store} running=${isRunning()} send=${(message) => ui.socket.send(message, { queue: true })} />
    <${MessageList} />
    <${PermissionDock} />
    <${ReviewList} />
    <${Composer} />
  </section>`;
}
