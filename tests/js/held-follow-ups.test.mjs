import { test } from 'node:test';
import assert from 'node:assert/strict';
import './browser-globals.mjs';
import { createStore } from '../../pneuma/web/lib/store.js';
import { followUps } from '../../pneuma/web/lib/follow-ups.js';

// What app.js does with each socket message: the store first, then the queue.
function receive(store, message) {
  if (store.receive(message)) followUps.receive(store, message);
}

test('a follow-up brought back after a stop stays held until released, then is taken as any other', () => {
  followUps.list = [];
  const store = createStore();
  const held = { queue_id: 'q1', content: 'make it red', timestamp: 1, held: true };
  receive(store, { type: 'message_history', messages: [], last_seq: 0, queued_messages: [held] });
  assert.deepEqual(followUps.list.map((q) => [q.content, q.held]), [['make it red', true]]);
  receive(store, { type: 'queued_message_released', seq: 1, queue_id: 'q1' });
  assert.deepEqual(followUps.list.map((q) => [q.content, q.held]), [['make it red', false]]);
  receive(store, { type: 'queued_message_taken', seq: 2, queue_id: 'q1' });
  receive(store, { type: 'user_message', seq: 3, content: 'make it red', timestamp: 3 });
  assert.deepEqual(followUps.list, []);
  assert.deepEqual(store.state.items.map((i) => [i.kind, i.content]), [['user', 'make it red']]);
});
