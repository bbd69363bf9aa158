import { test } from 'node:test';
import assert from 'node:assert/strict';
import './browser-globals.mjs';
import { createStore } from '../../pneuma/web/lib/store.js';
import { rewind } from '../../pneuma/web/lib/rewind.js';

test('a rewind note goes before the first message sent after it, also from history', () => {
  const store = createStore();
  const history = {
    type: 'message_history', seq: 9,
    messages: [
      { type: 'user_message', seq: 1, content: 'first', timestamp: 100 },
      { type: 'user_message', seq: 2, content: 'second', timestamp: 300 },
      { type: 'workspace_restored', seq: 3, target: '00000001-1', timestamp: 200 },
    ],
  };
  store.receive(history);
  rewind.receive(store, history);
  const kinds = store.state.items.map((i) => (i.kind === 'user' ? i.content : i.kind));
  assert.deepEqual(kinds, ['first', 'rewind', 'second']);
});

test('a live rewind note is added at the end', () => {
  const store = createStore();
  store.receive({ type: 'user_message', seq: 1, content: 'first', timestamp: 100 });
  const restored = { type: 'workspace_restored', seq: 2, target: 'u1', timestamp: 150 };
  store.receive(restored);
  rewind.receive(store, restored);
  assert.equal(store.state.items.at(-1).kind, 'rewind');
  assert.equal(store.state.items.at(-1).data.target, 'u1');
});
