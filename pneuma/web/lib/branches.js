// "Edit and resend" on the person's messages, and the conversation's
// branches (docs/conversations.md, "Branches").
//
// Any earlier message of the person's can be edited in place (Enter sends,
// Shift+Enter is a new line, Esc cancels): the conversation goes back to
// before it on a new branch and goes on from the edited text
// (POST /api/conversation/rewind); the server shows the branch to every
// tab (`conversation_switched`). The old branch is kept: where two versions
// split, the chat says "2 versions · show the other" next to the message,
// and that switches to the other one (POST /api/conversation/branches/{id}/switch).
//
// The versions and where they split come from GET /api/conversation/branches,
// read again whenever the conversation shown may have changed (a history, a
// switch, the end of a turn: `branchesReceive`, called by the chat for
// every socket message).

import { html, useState, useRef, useLayoutEffect } from '../vendor/preact-htm.js';
import { fetchJson } from './viewer-helpers.js';
import { t } from './i18n.js';
import { store } from './shell-state.js';

const splits = new Map(); // message key -> ids of the other versions from there
let asked = 0; // the newest listing asked for (older answers are dropped)
let available = true; // false once the server says it keeps no branches

/** A message of the person's as the server names it: its client id, else its time in ms. */
export function messageKey(item) {
  if (item.clientId) return item.clientId;
  return typeof item.timestamp === 'number' ? `ts:${Math.round(item.timestamp * 1000)}` : null;
}

function nameOf(item) {
  return item.clientId ? { clientMsgId: item.clientId } : { timestamp: item.timestamp * 1000 };
}

/** Every socket message the store has applied (lib/chat.js). */
export function branchesReceive(message) {
  const type = message.type;
  if (type === 'message_history' || type === 'conversation_switched' || type === 'result') refresh();
}

async function refresh() {
  if (!available) return;
  const mine = ++asked;
  let listing;
  try {
    listing = await fetchJson('/api/conversation/branches');
  } catch (error) {
    if (error.status === 404) available = false;
    return;
  }
  if (mine !== asked) return;
  splits.clear();
  for (const split of listing.splits || []) splits.set(split.messageId, split.versions);
  // The person's rows draw again with what is known now.
  for (const item of store.state.items) if (item.kind === 'user') item.rev = (item.rev || 0) + 1;
  store.notify();
}

function busy() {
  const status = store.state.status;
  return !!status && status !== 'idle';
}

/** "Edit and resend": the message's text, sent instead, on a new branch. */
async function resend(item, text) {
  await fetchJson('/api/conversation/rewind', { method: 'POST', json: { ...nameOf(item), text } });
}

async function switchTo(id) {
  await fetchJson(`/api/conversation/branches/${encodeURIComponent(id)}/switch`, { method: 'POST' });
}

function EditBox({ item, done }) {
  const [text, setText] = useState(item.content || '');
  const [problem, setProblem] = useState(null);
  const [working, setWorking] = useState(false);
  const box = useRef(null);
  useLayoutEffect(() => {
    const el = box.current;
    if (el) { el.focus(); el.setSelectionRange(el.value.length, el.value.length); }
  }, []);
  const send = async () => {
    if (!text.trim() || working) return;
    setWorking(true);
    setProblem(null);
    try {
      await resend(item, text);
      done();
    } catch (error) {
      setWorking(false);
      setProblem(error.message);
    }
  };
  const onKeyDown = (e) => {
    if (e.key === 'Escape') { e.preventDefault(); done(); }
    else if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
  };
  return html`<div class="branch-edit">
    <textarea class="branch-edit-text" ref=${box} value=${text} rows=${Math.min(8, text.split('\n').length + 1)}
      aria-label=${t('branches.editLabel')} disabled=${working}
      onInput=${(e) => setText(e.currentTarget.value)} onKeyDown=${onKeyDown} />
    <div class="branch-edit-actions">
      <span class="muted branch-edit-hint">${t('branches.editHint')}</span>
      <button class="btn" onClick=${done} disabled=${working}>${t('branches.cancel')}</button>
      <button class="btn primary branch-edit-send" onClick=${send} disabled=${working || !text.trim()}>${t('branches.send')}</button>
    </div>
    ${problem && html`<div class="notice error" role="alert"><div class="notice-body">${problem}</div></div>`}
  </div>`;
}

function Versions({ item }) {
  const key = messageKey(item);
  const others = key ? splits.get(key) : null;
  const [problem, setProblem] = useState(null);
  if (!others || !others.length) return null;
  const show = async () => {
    setProblem(null);
    try {
      await switchTo(others[0]);
    } catch (error) {
      setProblem(error.message);
    }
  };
  return html`<div class="branch-versions">
    <span class="muted">${t('branches.versions', { count: others.length + 1 })}</span>
    <span class="sep">·</span>
    <button class="link branch-show-other" disabled=${busy()} title=${busy() ? t('branches.busy') : ''}
      onClick=${show}>${t(others.length > 1 ? 'branches.showAnother' : 'branches.showOther')}</button>
    ${problem && html`<span class="error small" role="alert">${problem}</span>`}
  </div>`;
}

/** The person's message in the chat: its text (or the box editing it),
 *  "Edit and resend", and where another version splits off. */
export function UserBubble({ item }) {
  const [editing, setEditing] = useState(false);
  if (editing) return html`<${EditBox} item=${item} done=${() => setEditing(false)} />`;
  const editable = available && !item.pending && !item.queued && messageKey(item);
  // The button sits beside the bubble (shown on hover or focus): no line of its own.
  return html`<div class="branch-row">
      ${editable && html`<div class="branch-actions">
        <button class="link branch-edit-button" disabled=${busy()} title=${busy() ? t('branches.busy') : t('branches.editTitle')}
          onClick=${() => setEditing(true)}>${t('branches.edit')}</button>
      </div>`}
      ${item.content && html`<div class="bubble">${item.content}</div>`}
    </div>
    <${Versions} item=${item} />`;
}
