import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextFrame } from './browser-globals.mjs';
import { createStore } from '../../pneuma/web/lib/store.js';

const user = (seq, content, extra = {}) => ({ type: 'user_message', seq, content, timestamp: seq, ...extra });

test('a broadcast at or below the last seq is not shown twice', () => {
  const store = createStore();
  store.receive(user(1, 'hi'));
  store.receive(user(1, 'hi'));
  store.receive(user(2, 'again'));
  store.receive(user(2, 'again'));
  assert.deepEqual(store.state.items.map((i) => i.content), ['hi', 'again']);
  assert.equal(store.state.lastSeq, 2);
});

test('message_history replaces the conversation', () => {
  const store = createStore();
  store.receive(user(1, 'old'));
  store.receive({ type: 'message_history', seq: 5, messages: [user(3, 'a'), user(4, 'b')] });
  assert.deepEqual(store.state.items.map((i) => i.content), ['a', 'b']);
});

test("the person's message shows at once and is matched to the server's echo", () => {
  const store = createStore();
  store.addPendingUser({ content: 'draw a cat', images: [], viewerContext: null, clientId: 'c1' });
  assert.equal(store.state.items[0].pending, true);
  store.receive(user(1, 'draw a cat', { client_msg_id: 'c1' }));
  assert.equal(store.state.items.length, 1);
  assert.equal(store.state.items[0].pending, false);
});

test('streamed text adds up, and the final message with the same id replaces it', () => {
  const store = createStore();
  store.receive({ type: 'stream_event', seq: 1, event: { type: 'message_start', message: { id: 'm1' } } });
  for (const [seq, text] of [[2, 'Hel'], [3, 'lo']]) {
    store.receive({ type: 'stream_event', seq, event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } } });
  }
  const item = store.state.items[0];
  assert.equal(item.stream[0].text, 'Hello');
  store.receive({ type: 'assistant', seq: 4, message: { id: 'm1', content: [{ type: 'text', text: 'Hello' }] } });
  assert.equal(store.state.items.length, 1);
  assert.deepEqual(item.content, [{ type: 'text', text: 'Hello' }]);
  assert.equal(item.stream[0], null);
});

test('subscribers hear one notification for a burst of messages', async () => {
  const store = createStore();
  let calls = 0;
  store.subscribe(() => { calls += 1; });
  for (let seq = 1; seq <= 20; seq += 1) store.receive(user(seq, `m${seq}`));
  await nextFrame();
  assert.equal(calls, 1);
});

test('after a restart the missed messages add to what the tab holds, and history_resume says what is open now', () => {
  const store = createStore();
  store.receive({ type: 'message_history', last_seq: 10, messages: [user(3, 'a'), user(4, 'b')],
    pending_permissions: [{ type: 'permission_request', request: { request_id: 'old', tool_use_id: 't1' } }],
    conversation: { id: 'c1', title: '' } });
  assert.equal(store.state.permissions.size, 1);
  // The server restarted: the missed turn, each message with its seq, then the closing frame.
  store.receive(user(20, 'c'));
  store.receive({ type: 'history_resume', last_seq: 8300, pending_permissions: [], pending_confirmations: [],
    conversation: { id: 'c1', title: 'Tides' } });
  assert.deepEqual(store.state.items.map((i) => i.content), ['a', 'b', 'c']);
  assert.equal(store.state.permissions.size, 0); // the restarted agent asks nothing it asked before
  assert.equal(store.state.lastSeq, 8300);
  assert.equal(store.state.conversation.title, 'Tides');
  // Live broadcasts of the new run count on from there.
  assert.equal(store.receive(user(8300, 'dup')), false);
  assert.equal(store.receive(user(8301, 'd')), true);
});

test('a long first page is drawn from its newest items, older ones a chunk at a time', () => {
  const store = createStore();
  const messages = Array.from({ length: 150 }, (_, i) => user(i + 1, `m${i + 1}`));
  store.receive({ type: 'message_history', last_seq: 150, messages, has_more: true, before: 7 });
  const { state } = store;
  const drawn = () => state.items.slice(Math.max(0, state.items.indexOf(state.firstDrawn))).map((i) => i.content);
  assert.equal(drawn().length, 60);
  assert.equal(drawn().at(-1), 'm150');
  assert.equal(store.drawEarlier(), true);
  assert.deepEqual(drawn(), messages.slice(30).map((m) => m.content));
  assert.equal(store.drawEarlier(), true);
  assert.equal(drawn().length, 150);
  // Everything drawn: the next older page is the server's.
  assert.equal(store.drawEarlier(), false);
  assert.equal(store.requestHistoryPage(), 7);
});
