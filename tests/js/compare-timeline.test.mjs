import { test } from 'node:test';
import assert from 'node:assert/strict';
import './browser-globals.mjs';
import { keepSessionStorage, stateUrl } from '../../pneuma/web/lib/compare.js';
import { nearestTick, tickPosition } from '../../pneuma/web/lib/timeline.js';

function memoryStorage(entries) {
  const map = new Map(Object.entries(entries));
  return {
    get length() { return map.size; },
    key: (i) => [...map.keys()][i] ?? null,
    getItem: (k) => (map.has(k) ? map.get(k) : null),
    setItem: (k, v) => map.set(k, String(v)),
    removeItem: (k) => map.delete(k),
    dump: () => Object.fromEntries(map),
  };
}

test('what a snapshot viewer keeps in sessionStorage is put back when it closes', () => {
  const storage = memoryStorage({ 'pneuma-slide:position:s1': '{"file":"slides/01.html"}', other: 'x' });
  const putBack = keepSessionStorage(storage);
  storage.setItem('pneuma-slide:position:s1', '{"file":"slides/03.html"}');
  storage.setItem('pneuma-doc:scroll', '120');
  storage.removeItem('other');
  putBack();
  assert.deepEqual(storage.dump(), { 'pneuma-slide:position:s1': '{"file":"slides/01.html"}', other: 'x' });
});

test('a side of a checkpoint has its own URL, the ref escaped', () => {
  assert.equal(stateUrl('3', 'before'), '/api/checkpoints/3/state/before');
  assert.equal(stateUrl('u1', 'after'), '/api/checkpoints/u1/state/after');
});

test('the timeline spreads its ticks along the bar, "now" at the end, and scrubbing finds the nearest', () => {
  assert.deepEqual([0, 1, 2, 3].map((i) => Math.round(tickPosition(i, 4))), [0, 33, 67, 100]);
  assert.equal(tickPosition(0, 1), 100);
  assert.equal(nearestTick(0, 4), 0);
  assert.equal(nearestTick(0.4, 4), 1);
  assert.equal(nearestTick(0.9, 4), 3);
  assert.equal(nearestTick(-0.5, 4), 0);
  assert.equal(nearestTick(1.7, 4), 3);
  assert.equal(nearestTick(0.5, 1), 0);
});
