import { test } from 'node:test';
import assert from 'node:assert/strict';
import './browser-globals.mjs';
import { continuePoint, drawnTurn, nextTurn, turnDelay } from '../../pneuma/web/lib/replay-steps.js';

const turns = [
  { index: 1, ref: '1', clientMsgId: 'a', timestamp: 10 },
  { index: 2, ref: null, clientMsgId: null, timestamp: 20 },
  { index: 3, ref: '3', clientMsgId: 'c', timestamp: 30 },
];

test('a turn stays on screen 2 s at 1x, a quarter of that at 4x; an unknown speed is 1x', () => {
  assert.equal(turnDelay(1), 2000);
  assert.equal(turnDelay(4), 500);
  assert.equal(turnDelay(0.5), 4000);
  assert.equal(turnDelay(7), 2000);
});

test('playing stops after the last turn', () => {
  assert.equal(nextTurn(0, 3), 1);
  assert.equal(nextTurn(2, 3), null);
});

test('a turn without a checkpoint shows the files of the nearest earlier turn that has one', () => {
  assert.equal(drawnTurn(turns, 1), 0);
  assert.equal(drawnTurn(turns, 2), 2);
  assert.equal(drawnTurn([{ ref: null }], 0), null);
});

test('continuing from a turn goes back before the next one; the last turn has nothing to go back to', () => {
  assert.deepEqual(continuePoint(turns, 0), { ref: null, clientId: null, timestamp: 20 });
  assert.deepEqual(continuePoint(turns, 1), { ref: '3', clientId: 'c', timestamp: 30 });
  assert.equal(continuePoint(turns, 2), null);
});
