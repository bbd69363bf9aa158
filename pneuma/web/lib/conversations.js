// The workspace's conversations, at the head of the chat panel: which one
// is shown, and a menu listing them all (title, when, how many messages)
// to switch to one, rename one inline, delete one (after a confirmation)
// or start a new one (docs/conversations.md).
//
// The server does the work: a switch stops the agent and starts it again
// resuming the other conversation, and every tab gets that conversation's
// history (`conversation_switched`, applied by lib/store.js). It refuses
// while a turn runs, so the buttons that would switch are disabled then.

import { html, useState, useEffect, useRef } from '../vendor/preact-htm.js';
import { t, getLocale } from './i18n.js';

const TITLE_LENGTH = 60; // as the server titles a conversation from its first message

// The menu's styles live beside it; linked once, the first time this loads.
if (!document.querySelector('link[data-pneuma-styles="conversations"]')) {
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = new URL('./conversations.css', import.meta.url).href;
  link.dataset.pneumaStyles = 'conversations';
  document.head.append(link);
}

/** The title of the conversation shown: its own, else its first message's
 *  first words (the title the server gives it), else "untitled". */
export function currentTitle(state) {
  const own = state.conversation && state.conversation.title;
  if (own) return own;
  const first = state.items.find((i) => i.kind === 'user' && i.content && i.content.trim());
  if (!first) return t('conversations.untitled');
  const words = first.content.split(/\s+/).filter(Boolean).join(' ');
  return words.length <= TITLE_LENGTH ? words : `${words.slice(0, TITLE_LENGTH - 1).trimEnd()}…`;
}

/** "5 minutes ago", "yesterday", "3天前": in the page's language. */
function when(seconds) {
  const diff = (seconds * 1000 - Date.now()) / 1000;
  const format = new Intl.RelativeTimeFormat(getLocale(), { numeric: 'auto' });
  const steps = [[60, 'second'], [3600, 'minute'], [86400, 'hour'], [604800, 'day'], [2629800, 'week'], [31557600, 'month']];
  let unit = 'year';
  let size = 31557600;
  let previous = 1;
  for (const [limit, name] of steps) {
    if (Math.abs(diff) < limit) { unit = name; size = previous; break; }
    previous = limit;
  }
  if (unit === 'second') return format.format(0, 'second');
  return format.format(Math.round(diff / size), unit);
}

function Glyph({ d }) {
  return html`<svg class="icon" width="14" height="14" viewBox="0 0 24 24" aria-hidden="true" fill="none"
    stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round"><path d=${d} /></svg>`;
}
const PENCIL = 'M4 20h4L19 9l-4-4L4 16zM13.5 6.5l4 4';
const TRASH = 'M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13M10 11v6M14 11v6';
const PLUS = 'M12 5v14M5 12h14';
const CHEVRON = 'M6 9l6 6 6-6';

/** The conversation bar: `send(message)` sends on the session socket,
 *  `running` says whether a turn runs (switching is refused then). */
export function ConversationMenu({ store, send, running }) {
  const state = store.state;
  const [open, setOpen] = useState(false);
  const [editing, setEditing] = useState(null); // the id being renamed
  const [draft, setDraft] = useState('');
  const [doomed, setDoomed] = useState(null); // the id whose deletion awaits a yes
  const ref = useRef(null);

  useEffect(() => {
    if (!open) return undefined;
    send({ type: 'conversation_list' }); // counts and times as they are now
    const close = (e) => { if (ref.current && !ref.current.contains(e.target)) setOpen(false); };
    const escape = (e) => { if (e.key === 'Escape' && !editing) setOpen(false); };
    document.addEventListener('pointerdown', close);
    document.addEventListener('keydown', escape);
    return () => {
      document.removeEventListener('pointerdown', close);
      document.removeEventListener('keydown', escape);
    };
  }, [open, editing]);

  useEffect(() => {
    // Once painted: the click that opened the field is over by then.
    const field = editing && ref.current && ref.current.querySelector('.conv-rename input');
    if (field) { field.focus(); field.select(); }
  }, [editing]);

  // A server that keeps no conversations (its log could not be opened)
  // names none in its history: nothing to switch between.
  if (state.historyLoaded && !state.conversation) return null;
  const shownId = state.conversation && state.conversation.id;
  const list = state.conversations || [];
  const busyTitle = running ? t('conversations.busy') : null;
  const finish = () => { setOpen(false); setEditing(null); setDoomed(null); };
  const startNew = () => { if (!running) { send({ type: 'conversation_new' }); finish(); } };
  const pick = (id) => {
    if (id !== shownId && !running) send({ type: 'conversation_switch', conversation_id: id });
    finish();
  };
  const rename = (e) => {
    e.preventDefault();
    const title = draft.trim();
    if (title) send({ type: 'conversation_rename', conversation_id: editing, title });
    setEditing(null);
  };
  const remove = (id) => {
    send({ type: 'conversation_delete', conversation_id: id });
    setDoomed(null);
  };

  // A plain function, not a component: a component defined in here would be
  // a new type on every render, and the rename field would lose its focus.
  function row(c) {
    const current = c.id === shownId;
    const title = c.title || (current ? currentTitle(state) : t('conversations.untitled'));
    if (editing === c.id) {
      return html`<form key=${c.id} class="conv-row conv-rename" onSubmit=${rename}>
        <input value=${draft} maxlength="200" aria-label=${t('conversations.renameLabel')}
          onInput=${(e) => setDraft(e.target.value)}
          onKeyDown=${(e) => { if (e.key === 'Escape') { e.stopPropagation(); setEditing(null); } }} />
        <button type="submit" class="conv-btn primary">${t('conversations.save')}</button>
        <button type="button" class="conv-btn" onClick=${() => setEditing(null)}>${t('conversations.cancel')}</button>
      </form>`;
    }
    if (doomed === c.id) {
      return html`<div key=${c.id} class="conv-row conv-confirm" role="alertdialog" aria-label=${t('conversations.delete')}>
        <span>${t('conversations.confirmDelete', { title })}</span>
        <div class="conv-confirm-actions">
          <button class="conv-btn danger" data-confirm-delete=${c.id} onClick=${() => remove(c.id)}>${t('conversations.delete')}</button>
          <button class="conv-btn" onClick=${() => setDoomed(null)}>${t('conversations.cancel')}</button>
        </div>
      </div>`;
    }
    return html`<div key=${c.id} class=${`conv-row${current ? ' current' : ''}`} data-conversation=${c.id}>
      <button class="conv-pick" role="menuitem" aria-current=${current ? 'true' : null}
        disabled=${running && !current} title=${current ? null : busyTitle} onClick=${() => pick(c.id)}>
        <span class="conv-row-title">${title}</span>
        <span class="conv-meta">${when(c.updated)} · ${t('conversations.messages', { count: c.messages })}</span>
      </button>
      <button class="conv-act" title=${t('conversations.rename')} aria-label=${t('conversations.rename')}
        onClick=${() => { setDoomed(null); setDraft(title); setEditing(c.id); }}><${Glyph} d=${PENCIL} /></button>
      <button class="conv-act" title=${current && running ? busyTitle : t('conversations.delete')} aria-label=${t('conversations.delete')}
        disabled=${current && running} onClick=${() => { setEditing(null); setDoomed(c.id); }}><${Glyph} d=${TRASH} /></button>
    </div>`;
  }

  return html`<div class="conv-bar" ref=${ref}>
    <button class="conv-current" aria-haspopup="menu" aria-expanded=${open} title=${t('conversations.menu')}
      onClick=${() => setOpen(!open)}>
      <span class="conv-title">${currentTitle(state)}</span><${Glyph} d=${CHEVRON} />
    </button>
    <button class="conv-new" title=${busyTitle || t('conversations.new')} aria-label=${t('conversations.new')}
      disabled=${running} onClick=${startNew}><${Glyph} d=${PLUS} /></button>
    ${open && html`<div class="conv-pop" role="menu" aria-label=${t('conversations.label')}>
      <div class="conv-pop-head">${t('conversations.label')}</div>
      <div class="conv-list">
        ${list.length ? list.map(row)
          : html`<div class="conv-empty">${t('conversations.loading')}</div>`}
      </div>
      <button class="conv-pop-new" disabled=${running} title=${busyTitle} onClick=${startNew}>
        <${Glyph} d=${PLUS} /> ${t('conversations.new')}
      </button>
    </div>`}
  </div>`;
}
