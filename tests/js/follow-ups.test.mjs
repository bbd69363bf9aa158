import { test } from 'node:test';
import assert from 'node:assert/strict';
import './browser-globals.mjs';
import { createStore } from '../../pneuma/web/lib/store.js';
import { followUps } from '../../pneuma/web/lib/follow-ups.js';

// What app.js does with each socket message: the store first, then the queue.
function receive(store, message) {
  if (store.receive(message)) followUps.receive(store, message);
}

const queued = (seq, id, content, clientId) => ({
  type: 'user_message_queued', seq, queue_id: id, content, client_msg_id: clientId, timestamp: seq,
});

test('a queued follow-up leaves the chat for the queue until the agent takes it', () => {
  followUps.list = [];
  const store = createStore();
  receive(store, { type: 'user_message', seq: 1, content: 'first', timestamp: 1 });
  const picture = { media_type: 'image/png', size: 8, url: 'data:image/png;base64,AAAA' };
  store.addPendingUser({ content: 'second', images: [picture], viewerContext: null, clientId: 'c2' });
  receive(store, queued(2, 'q1', 'second', 'c2'));
  // Shown once, as queued: not as a message being sent at the end of the chat.
  assert.deepEqual(store.state.items.map((i) => i.content), ['first']);
  assert.deepEqual(followUps.list.map((q) => q.content), ['second']);
  receive(store, { type: 'queued_message_edited', seq: 3, queue_id: 'q1', content: 'second, edited' });
  assert.deepEqual(followUps.list.map((q) => q.content), ['second, edited']);
  receive(store, { type: 'result', seq: 4, data: { subtype: 'error_during_execution', is_error: true } });
  receive(store, { type: 'queued_message_taken', seq: 5, queue_id: 'q1' });
  receive(store, { type: 'user_message', seq: 6, content: 'second, edited', client_msg_id: 'c2', timestamp: 6 });
  assert.deepEqual(followUps.list, []);
  // The stopped turn's result comes before the follow-up, which is now an ordinary message.
  assert.deepEqual(store.state.items.map((i) => i.kind), ['user', 'result', 'user']);
  const sent = store.state.items[2];
  assert.equal(sent.pending, false);
  assert.equal(sent.content, 'second, edited');
  assert.deepEqual(sent.images, [picture]); // the picture this tab attached, not a placeholder
});

test('a cancelled follow-up is gone; a reloaded page gets the queue with the history', () => {
  followUps.list = [];
  const store = createStore();
  receive(store, queued(1, 'q1', 'a', 'c1'));
  receive(store, queued(2, 'q2', 'b', 'c2'));
  receive(store, queued(2, 'q2', 'b', 'c2')); // a replayed duplicate: shown once
  receive(store, { type: 'queued_message_cancelled', seq: 3, queue_id: 'q1' });
  assert.deepEqual(followUps.list.map((q) => q.queue_id), ['q2']);
  const reloaded = createStore();
  followUps.list = [];
  receive(reloaded, { type: 'message_history', messages: [], last_seq: 3, queued_messages: [queued(2, 'q2', 'b', 'c2')] });
  assert.deepEqual(followUps.list.map((q) => q.content), ['b']);
});
