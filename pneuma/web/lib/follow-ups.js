// Follow-ups: what the person sent while the agent works. The server holds
// them until the agent's turn ends (docs/protocol.md, "Queued follow-ups");
// the chat shows them after the conversation, marked "Queued", each
// editable and cancellable until the agent takes it. Taken, one becomes an
// ordinary message: its `user_message` echo lands where the turn begins,
// after the "Stopped" or "Done" line of the turn before. One brought back
// from a stopped run is held (`held`): marked "Not sent", it waits for the
// person's Send and is never sent on its own.

import { html, useState } from '../vendor/preact-htm.js';
import { t } from './i18n.js';

/** The queue as the page knows it, oldest first: the fields of
 *  `user_message_queued` ({queue_id, content, images?, client_msg_id?, timestamp, held?}). */
export const followUps = {
  list: [],
  // This tab's own messages as it showed them while being sent (with the
  // pictures it attached), by client_msg_id: shown so again once taken.
  sending: new Map(),

  /** Follow one socket message (after the store applied it). */
  receive(store, message) {
    switch (message.type) {
      case 'user_message_queued':
        if (!this.list.some((q) => q.queue_id === message.queue_id)) this.list = [...this.list, message];
        dropSending(store, [message]);
        break;
      case 'queued_message_taken': {
        const taken = this.list.find((q) => q.queue_id === message.queue_id);
        const own = taken && this.sending.get(taken.client_msg_id);
        // Back at the end of the chat, with its last text, where its echo
        // (next) confirms it.
        if (own) store.state.items.push({ ...own, content: taken.content, rev: (own.rev || 0) + 1 });
        this.forget(message.queue_id);
        break;
      }
      case 'queued_message_cancelled':
        this.forget(message.queue_id);
        break;
      case 'queued_message_edited':
        this.list = this.list.map((q) => (q.queue_id === message.queue_id ? { ...q, content: message.content } : q));
        break;
      case 'queued_message_released':
        this.list = this.list.map((q) => (q.queue_id === message.queue_id ? { ...q, held: false } : q));
        break;
      case 'message_history':
      case 'conversation_switched':
      case 'history_resume':
        // What is still queued now, as the server says (a reload, a reconnect).
        this.list = message.queued_messages || [];
        dropSending(store, this.list);
        break;
      default:
        return;
    }
    store.notify();
  },

  forget(queueId) {
    const gone = this.list.find((q) => q.queue_id === queueId);
    if (gone) this.sending.delete(gone.client_msg_id);
    this.list = this.list.filter((q) => q.queue_id !== queueId);
  },
};

/** The page showed the person's message as being sent at the end of the
 *  chat; queued, it is shown with the queue instead, and the turn the agent
 *  is still working on goes on above it. */
function dropSending(store, queued) {
  const ids = new Set(queued.map((q) => q.client_msg_id).filter(Boolean));
  if (!ids.size) return;
  store.state.items = store.state.items.filter((i) => {
    const own = i.kind === 'user' && i.pending && ids.has(i.clientId);
    if (own) followUps.sending.set(i.clientId, i);
    return !own;
  });
}

function QueuedMessage({ queued, send }) {
  const [editing, setEditing] = useState(null); // the text being edited, or null
  const save = () => {
    if (editing.trim()) send({ type: 'queued_message_edit', queue_id: queued.queue_id, content: editing });
    setEditing(null);
  };
  const onKeyDown = (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); save(); }
    if (e.key === 'Escape') { e.preventDefault(); setEditing(null); } // not an interrupt (app.js)
  };
  const images = queued.images || [];
  const { held } = queued;
  return html`<div class=${`msg user queued${held ? ' held' : ''}`} data-queue-id=${queued.queue_id}>
    ${images.length > 0 && html`<div class="msg-images">
      ${images.map((img, i) => html`<span key=${i} class="img-placeholder">${t('msg.imageType', { type: img.media_type.split('/')[1] })}</span>`)}
    </div>`}
    ${editing == null
      ? queued.content && html`<div class="bubble">${queued.content}</div>`
      : html`<textarea class="queued-editor" aria-label=${t('queue.edit')} value=${editing}
          onInput=${(e) => setEditing(e.target.value)} onKeyDown=${onKeyDown} autofocus />`}
    <div class="msg-meta queued-meta">
      <span class="queued-mark" title=${t(held ? 'queue.held.hint' : 'queue.hint')}>${t(held ? 'queue.held' : 'queue.mark')}</span>
      ${editing == null
        ? html`${held && html`<button class="link queued-send" onClick=${() => send({ type: 'queued_message_send', queue_id: queued.queue_id })}>${t('queue.send')}</button>`}
               <button class="link queued-edit" onClick=${() => setEditing(queued.content)}>${t('queue.edit')}</button>
               <button class="link queued-cancel" onClick=${() => send({ type: 'queued_message_cancel', queue_id: queued.queue_id })}>${t('queue.cancel')}</button>`
        : html`<button class="link queued-save" disabled=${!editing.trim()} onClick=${save}>${t('queue.save')}</button>
               <button class="link queued-keep" onClick=${() => setEditing(null)}>${t('queue.keep')}</button>`}
    </div>
  </div>`;
}

/** The queued follow-ups, after the conversation; `send` puts a message on the socket. */
export function QueuedFollowUps({ send }) {
  if (!followUps.list.length) return null;
  return html`<div class="queued-list">
    ${followUps.list.map((queued) => html`<${QueuedMessage} key=${queued.queue_id} queued=${queued} send=${send} />`)}
  </div>`;
}
