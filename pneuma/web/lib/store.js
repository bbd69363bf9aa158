// The conversation as the page shows it, built from the socket's messages.
//
// Never show a message twice:
//   * every broadcast carries `seq`; one at or below the last applied seq
//     is dropped (a replay after reconnect overlaps what we saw);
//   * `message_history` replaces the whole conversation (its newest page:
//     older messages come a page at a time, `history_page`, prepended);
//   * after a server restart a tab that holds the conversation gets only
//     what it missed, from the log, each message with its seq, then
//     `history_resume` with what is open now (docs/protocol.md);
//   * a `history_page` is applied only in answer to the request for it
//     (its cursor is older than the one asked for), so a page that arrives
//     twice is shown once;
//   * assistant messages are keyed by `message.id`: the same id again
//     replaces the blocks (the final message also replaces what was
//     streamed for it);
//   * the person's own message is shown at once (pending) and matched to the
//     server's echo by `client_msg_id`.

import { t } from './i18n.js';

// The chat draws the newest DRAWN_AT_ONCE items of what it got (a first
// page, an older page) and the ones before them a chunk at a time as the
// person scrolls up, so a long first page costs what fits on screen.
export const DRAWN_AT_ONCE = 60;

// Note texts may be functions: they are translated when shown, so a
// language switch changes notes already in the chat too.
export function createStore() {
  const listeners = new Set();
  const extensions = []; // (msg, {replaying}) => handled?, from extend()
  let scheduled = false;

  const state = {
    connection: { state: 'connecting', attempt: 0, retryAt: null },
    session: null, // session_init.session, kept up to date by session_update
    status: 'idle', // idle | running | requesting | compacting | …
    lastSeq: 0,
    items: [], // the conversation, in order
    assistants: new Map(), // message id -> item
    toolUses: new Map(), // tool_use_id -> {block, item}
    toolResults: new Map(), // tool_use_id -> {content, is_error}
    permissions: new Map(), // request_id -> request (open prompts)
    decided: new Map(), // tool_use_id -> 'allow' | 'deny'
    confirmations: [], // open confirmation_requests, oldest first
    streamByParent: new Map(), // parent_tool_use_id|'' -> assistant item being streamed
    historyLoaded: false,
    // Older messages than the first item, in the server's log: whether
    // there are any, the cursor to ask for them with, the cursor of the
    // page asked for and not answered yet, and why the last ask failed.
    historyHasMore: false,
    historyBefore: null,
    historyRequested: null,
    historyError: null,
    historyPrepends: 0, // counts prepended pages (the list keeps its scroll anchor)
    // The oldest item the chat draws (those before it wait for a scroll up);
    // null: every item is drawn.
    firstDrawn: null,
    wholeRequested: new Set(), // rows of previews whose whole message was asked for
    lastResult: null,
    // The workspace's conversations (lib/conversations.js): the one shown
    // {id, title}, and the list [{id, title, created, updated, messages,
    // current}] once asked for or announced (null before).
    conversation: null,
    conversations: null,
    version: 0,
  };

  let keyCounter = 0;
  const newKey = (prefix) => `${prefix}${++keyCounter}`;

  function notify() {
    state.version += 1;
    if (scheduled) return;
    scheduled = true;
    const flush = () => {
      scheduled = false;
      for (const listener of listeners) listener(state);
    };
    // Coalesce a burst of stream deltas into one render per frame; fall back
    // to a timer in a hidden tab (no animation frames there).
    if (document.hidden) setTimeout(flush, 50);
    else requestAnimationFrame(flush);
  }

  function touch(item) {
    item.rev = (item.rev || 0) + 1;
  }

  // --- assistant messages -------------------------------------------------

  function assistantItem(id, parent) {
    let item = state.assistants.get(id);
    if (!item) {
      item = { kind: 'assistant', key: newKey('a'), id, parent: parent || null, content: [], stream: [], rev: 0 };
      state.assistants.set(id, item);
      state.items.push(item);
    }
    return item;
  }

  function noteToolUses(item) {
    for (const block of item.content) {
      if (block && block.type === 'tool_use' && block.id) state.toolUses.set(block.id, { block, item });
    }
  }

  function onAssistant(msg) {
    const message = msg.message || {};
    const parent = msg.parent_tool_use_id || '';
    let item = message.id ? state.assistants.get(message.id) : null;
    if (!item) {
      // Deltas that began before we knew the id (a reload mid-stream) belong
      // to this message: adopt that item instead of showing the text twice.
      const orphan = state.streamByParent.get(parent);
      if (orphan && orphan.id == null) {
        item = orphan;
        item.id = message.id;
        if (message.id) state.assistants.set(message.id, item);
      } else {
        item = assistantItem(message.id || newKey('anon'), parent);
      }
    }
    item.content = Array.isArray(message.content) ? message.content : [];
    item.model = message.model;
    // A page's preview of a message too large for it (the whole of it on request).
    item.preview = msg.preview || null;
    item.error = msg.error || (message.content || []).some?.((b) => b.is_api_error_message) || null;
    // Streamed blocks the final content now covers are no longer needed.
    item.stream = item.stream.map((b, i) => (i < item.content.length ? null : b));
    noteToolUses(item);
    touch(item);
  }

  function onStreamEvent(msg) {
    const event = msg.event || {};
    const parent = msg.parent_tool_use_id || '';
    if (event.type === 'message_start') {
      const id = event.message && event.message.id;
      const item = assistantItem(id || newKey('anon'), parent);
      item.streaming = true;
      state.streamByParent.set(parent, item);
      touch(item);
      return;
    }
    let item = state.streamByParent.get(parent);
    if (!item) {
      if (event.type !== 'content_block_start' && event.type !== 'content_block_delta') return;
      item = { kind: 'assistant', key: newKey('a'), id: null, parent: parent || null, content: [], stream: [], rev: 0, streaming: true };
      state.items.push(item);
      state.streamByParent.set(parent, item);
    }
    const index = typeof event.index === 'number' ? event.index : 0;
    if (event.type === 'content_block_start') {
      const block = event.content_block || {};
      if (index >= item.content.length) {
        item.stream[index] = { type: block.type, text: block.text || block.thinking || '', name: block.name, id: block.id };
      }
    } else if (event.type === 'content_block_delta') {
      if (index < item.content.length) return; // already final
      const delta = event.delta || {};
      const block = item.stream[index] || (item.stream[index] = { type: 'text', text: '' });
      if (delta.type === 'text_delta') block.text += delta.text || '';
      else if (delta.type === 'thinking_delta') { block.type = 'thinking'; block.text += delta.thinking || ''; }
      else if (delta.type === 'input_json_delta') block.partialJson = (block.partialJson || '') + (delta.partial_json || '');
    } else if (event.type === 'message_stop') {
      item.streaming = false;
      state.streamByParent.delete(parent);
    }
    touch(item);
  }

  function endStreams() {
    for (const item of state.streamByParent.values()) {
      item.streaming = false;
      touch(item);
    }
    state.streamByParent.clear();
  }

  // --- everything else ----------------------------------------------------

  function onUserMessage(msg) {
    const pending = msg.client_msg_id
      ? state.items.find((i) => i.kind === 'user' && i.clientId === msg.client_msg_id)
      : null;
    if (pending) {
      pending.pending = false;
      pending.failed = false;
      pending.viewerContext = msg.viewer_context || pending.viewerContext;
      pending.timestamp = msg.timestamp;
      touch(pending);
      return;
    }
    state.items.push({
      kind: 'user',
      key: newKey('u'),
      content: msg.content || '',
      viewerContext: msg.viewer_context || null,
      images: (msg.images || []).map((i) => ({ media_type: i.media_type, size: i.size })),
      clientId: msg.client_msg_id || null,
      timestamp: msg.timestamp,
      preview: msg.preview || null,
      rev: 0,
    });
  }

  function onToolResult(msg) {
    state.toolResults.set(msg.tool_use_id, { content: msg.content, is_error: !!msg.is_error, preview: msg.preview || null });
    const use = state.toolUses.get(msg.tool_use_id);
    if (use) touch(use.item);
    else state.items.push({ kind: 'orphan_result', key: newKey('r'), toolUseId: msg.tool_use_id, rev: 0 });
  }

  function apply(msg, { replaying = false } = {}) {
    switch (msg.type) {
      case 'session_init':
        state.session = { ...msg.session };
        return;
      case 'session_update': {
        const previous = state.session && state.session.model;
        state.session = { ...(state.session || {}), ...(msg.updates || {}) };
        const model = msg.updates && msg.updates.model;
        if (model && previous && model !== previous && !replaying && state.historyLoaded) {
          state.items.push({ kind: 'note', key: newKey('n'), tone: 'quiet', text: () => t('note.modelSwitched', { model }) });
        }
        return;
      }
      case 'conversation_switched':
        // Another conversation is shown (every tab follows): its history
        // replaces this one, exactly as a message_history would.
        state.conversations = msg.conversations || state.conversations;
        apply({ ...msg, type: 'message_history', last_seq: msg.seq }, { replaying });
        return;
      case 'conversations': {
        state.conversations = msg.conversations || [];
        const shown = state.conversations.find((c) => c.id === msg.current);
        if (shown) state.conversation = { id: shown.id, title: shown.title };
        return;
      }
      case 'message_history':
        if (msg.conversation) state.conversation = msg.conversation;
        resetConversation();
        for (const m of msg.messages || []) apply(m, { replaying: true });
        state.historyHasMore = !!msg.has_more && msg.before != null;
        state.historyBefore = msg.before ?? null;
        state.historyRequested = null;
        state.historyError = null;
        for (const p of msg.pending_permissions || []) apply(p, { replaying: true });
        // Open confirmations are not history, but a reloaded tab must still show them.
        state.confirmations = state.confirmations.filter((c) => c.local);
        for (const c of msg.pending_confirmations || []) state.confirmations.push(c);
        state.lastSeq = msg.last_seq || 0;
        state.historyLoaded = true;
        state.firstDrawn = state.items.length > DRAWN_AT_ONCE ? state.items[state.items.length - DRAWN_AT_ONCE] : null;
        return;
      case 'history_resume':
        // What the tab missed came before this, message by message: the
        // prompts open now replace those it showed (a restarted agent
        // asks nothing it asked before), and no stream goes on.
        if (msg.conversation) state.conversation = msg.conversation;
        endStreams();
        state.permissions.clear();
        for (const p of msg.pending_permissions || []) apply(p, { replaying: true });
        state.confirmations = state.confirmations.filter((c) => c.local);
        for (const c of msg.pending_confirmations || []) state.confirmations.push(c);
        state.lastSeq = Math.max(state.lastSeq, msg.last_seq || 0);
        state.historyLoaded = true;
        return;
      case 'user_message':
        onUserMessage(msg);
        return;
      case 'stream_event':
        onStreamEvent(msg);
        return;
      case 'assistant':
        onAssistant(msg);
        return;
      case 'tool_result':
        onToolResult(msg);
        return;
      case 'result':
        endStreams();
        state.lastResult = msg.data || {};
        state.items.push({ kind: 'result', key: newKey('res'), data: msg.data || {}, rev: 0 });
        return;
      case 'permission_request': {
        const request = msg.request || {};
        if (request.request_id) state.permissions.set(request.request_id, request);
        const use = request.tool_use_id && state.toolUses.get(request.tool_use_id);
        if (use) touch(use.item);
        return;
      }
      case 'permission_cancelled': {
        const request = state.permissions.get(msg.request_id);
        state.permissions.delete(msg.request_id);
        if (request && request.tool_use_id) {
          state.decided.set(request.tool_use_id, msg.behavior || 'withdrawn');
          const use = state.toolUses.get(request.tool_use_id);
          if (use) touch(use.item);
        }
        return;
      }
      case 'status_change':
        state.status = msg.status || 'idle';
        if (state.session) state.session.status = state.status;
        if (state.status === 'idle') endStreams();
        return;
      case 'cli_connected':
        if (state.session) state.session.agent_connected = true;
        return;
      case 'cli_disconnected': {
        if (state.session) state.session.agent_connected = false;
        state.permissions.clear();
        endStreams();
        const code = msg.exit_code;
        const stderr = Array.isArray(msg.stderr) ? msg.stderr : [];
        if ((code === 0 || code == null) && !stderr.length) return;
        state.items.push({
          kind: 'note', key: newKey('n'), tone: 'warn',
          text: () => (code == null ? t('note.agentStopped') : t('note.agentExited', { code: String(code) })),
          detail: stderr.join('\n'),
          hint: () => t('note.agentRestart'),
        });
        return;
      }
      case 'history_page':
        onHistoryPage(msg);
        return;
      case 'history_message':
        onWholeMessage(msg);
        return;
      case 'error':
        if (msg.code === 'history_unavailable') {
          // About the page this tab asked for: shown where the older messages would be.
          state.historyRequested = null;
          state.historyError = msg.message || t('history.unreadable');
          return;
        }
        state.items.push({ kind: 'error', key: newKey('e'), code: msg.code, message: msg.message, rev: 0 });
        return;
      case 'system_note':
        state.items.push({ kind: 'note', key: newKey('n'), tone: 'quiet', text: msg.text || msg.message || '' });
        return;
      case 'confirmation_request':
        if (!replaying && !state.confirmations.some((c) => c.request_id === msg.request_id)) {
          state.confirmations.push(msg);
        }
        return;
      case 'confirmation_cancelled':
        // Answered in another tab, or timed out on the server.
        state.confirmations = state.confirmations.filter((c) => c.request_id !== msg.request_id);
        return;
      default:
        // A type the shell does not know: a backend's module may (extend()).
        for (const extension of extensions) if (extension(msg, { replaying })) return;
        return;
    }
  }

  /** Older messages, before the first item: built on their own (replaying,
   *  so they touch nothing live) and put in front of what is shown. */
  function onHistoryPage(msg) {
    const requested = state.historyRequested;
    // Only the answer to the outstanding request: its oldest message is
    // older than the cursor asked for. A repeat of a page already applied
    // (or one asked for on an earlier connection) is not.
    if (requested == null || (msg.before != null && !(msg.before < requested))) return;
    state.historyRequested = null;
    state.historyError = null;
    const shown = state.items;
    const live = { streams: state.streamByParent, lastResult: state.lastResult };
    state.items = [];
    // A page's `result` ends the streams of its own (none), never the live ones.
    state.streamByParent = new Map();
    for (const m of msg.messages || []) apply(m, { replaying: true });
    const older = state.items;
    state.streamByParent = live.streams;
    state.lastResult = live.lastResult;
    // Tool results shown on their own because their tool call was not
    // loaded yet now belong to its card.
    const kept = shown.filter((i) => !(i.kind === 'orphan_result' && state.toolUses.has(i.toolUseId)));
    state.items = older.concat(kept);
    state.historyHasMore = !!msg.has_more && msg.before != null;
    state.historyBefore = msg.before ?? null;
    // A page is asked for with every item drawn: its newest ones are drawn now.
    state.firstDrawn = older.length > DRAWN_AT_ONCE ? older[older.length - DRAWN_AT_ONCE] : null;
    if (older.length) state.historyPrepends += 1;
  }

  /** The whole of a message a page gave as a preview: it takes the
   *  preview's place (an assistant message by its id, a tool result by its
   *  call, the person's message by the preview's row). */
  function onWholeMessage(msg) {
    const whole = msg.message || {};
    state.wholeRequested.delete(msg.row);
    if (whole.type === 'user_message') {
      const item = state.items.find((i) => i.kind === 'user' && i.preview && i.preview.row === msg.row);
      if (!item) return;
      item.content = whole.content || '';
      item.viewerContext = whole.viewer_context || item.viewerContext;
      item.preview = null;
      touch(item);
    } else if (whole.type === 'assistant' || whole.type === 'tool_result') {
      apply(whole, { replaying: true });
    }
  }

  function resetConversation() {
    const pending = state.items.filter((i) => i.kind === 'user' && i.pending);
    state.items = [];
    state.assistants.clear();
    state.toolUses.clear();
    state.toolResults.clear();
    state.permissions.clear();
    state.decided.clear();
    state.streamByParent.clear();
    state.lastResult = null;
    // What the person sent that the server has not echoed yet stays on screen;
    // the echo (by client_msg_id) will confirm it.
    state.items.push(...pending);
  }

  return {
    state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    notify,
    /** Follow the socket messages the shell does not handle itself (a
     *  backend's own, lib/backend-ui.js): `extension(msg, {replaying})`
     *  returns true when it took the message. */
    extend(extension) {
      extensions.push(extension);
      return () => {
        const at = extensions.indexOf(extension);
        if (at >= 0) extensions.splice(at, 1);
      };
    },
    /** Apply one message from the socket; false if it was a duplicate. */
    receive(msg) {
      if (typeof msg.seq === 'number') {
        if (msg.seq <= state.lastSeq) return false;
        state.lastSeq = msg.seq;
      }
      apply(msg);
      notify();
      return true;
    },
    setConnection(connection) {
      state.connection = connection;
      // A page asked for on a connection that dropped will never come.
      if (connection.state !== 'open') {
        state.historyRequested = null;
        state.wholeRequested.clear();
      }
      notify();
    },
    /** Mark the next older page as asked for; its cursor, or null when
     *  there is nothing to ask for or a request is already out. */
    requestHistoryPage() {
      if (!state.historyHasMore || state.historyBefore == null || state.historyRequested != null) return null;
      state.historyRequested = state.historyBefore;
      state.historyError = null;
      notify();
      return state.historyRequested;
    },
    /** Mark the whole of a previewed message (its row) as asked for; false
     *  when it already is. */
    requestWhole(row) {
      if (state.wholeRequested.has(row)) return false;
      state.wholeRequested.add(row);
      notify();
      return true;
    },
    /** Draw the next older chunk of what the tab has; false when every
     *  item is drawn already (then the older page is asked of the server). */
    drawEarlier() {
      const from = state.firstDrawn ? state.items.indexOf(state.firstDrawn) : 0;
      if (from <= 0) {
        state.firstDrawn = null;
        return false;
      }
      state.firstDrawn = from > DRAWN_AT_ONCE ? state.items[from - DRAWN_AT_ONCE] : null;
      state.historyPrepends += 1;
      notify();
      return true;
    },
    /** The request could not be sent (the socket is down): ask again later. */
    cancelHistoryPage() {
      state.historyRequested = null;
      notify();
    },
    addPendingUser({ content, images, viewerContext, clientId }) {
      state.items.push({ kind: 'user', key: newKey('u'), content, images, viewerContext, clientId, pending: true, rev: 0 });
      notify();
    },
    markDecided(toolUseId, behavior) {
      if (!toolUseId) return;
      state.decided.set(toolUseId, behavior);
      const use = state.toolUses.get(toolUseId);
      if (use) touch(use.item);
      notify();
    },
    dropPermission(requestId) {
      state.permissions.delete(requestId);
      notify();
    },
    shiftConfirmation(requestId) {
      state.confirmations = state.confirmations.filter((c) => c.request_id !== requestId);
      notify();
    },
    addLocalConfirmation(confirmation) {
      state.confirmations.push(confirmation);
      notify();
    },
    addNote(note) {
      state.items.push({ kind: 'note', key: newKey('n'), tone: 'quiet', ...note });
      notify();
    },
  };
}
