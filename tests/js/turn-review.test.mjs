// A turn's changes in the chat (lib/turn-review.js, lib/rewind.js): the
// one-line summary, the labels in the page's language, the conflicts of a
// refused revert, and a `turn_described` reaching the turn it belongs to.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import './browser-globals.mjs';
import { changeText, conflictsOf, describedFrom, summaryOf } from '../../pneuma/web/lib/turn-review.js';
import { setLocale } from '../../pneuma/web/lib/i18n.js';

const retitle = { id: 'slide:3:title', where: { en: 'Slide 3', 'zh-CN': '第 3 页' }, what: { en: 'title changed', 'zh-CN': '标题已修改' }, kind: 'changed', files: ['manifest.json'] };
const move = { id: 'slide:7:moved', where: 'Slide 7', what: 'moved after slide 4', kind: 'moved', files: ['manifest.json'] };

test('a change reads "where: what" in the page language', async () => {
  await setLocale('en');
  assert.equal(changeText(retitle), 'Slide 3: title changed');
  assert.equal(changeText({ where: 'notes.md', what: '' }), 'notes.md');
  await setLocale('zh-CN');
  try {
    assert.equal(changeText(retitle), '第 3 页：标题已修改');
    assert.equal(changeText(move), 'Slide 7：moved after slide 4');
  } finally {
    await setLocale('en');
  }
});

test('the summary shows the first changes that fit and counts the rest', () => {
  assert.deepEqual(summaryOf([retitle, move], {}),
    { shown: ['Slide 3: title changed', 'Slide 7: moved after slide 4'], more: 0 });
  const many = Array.from({ length: 9 }, (_, i) => ({ ...move, id: `m${i}`, where: `Slide ${i + 1}` }));
  const { shown, more } = summaryOf(many, {});
  assert.ok(shown.length >= 1 && shown.length <= 3, shown);
  assert.equal(shown.length + more, 9);
  // One very long change is still shown (the line's ellipsis cuts it), never nothing.
  const long = { ...move, where: 'x'.repeat(200) };
  assert.deepEqual(summaryOf([long, move], {}).shown.length, 1);
  assert.deepEqual(summaryOf([]), { shown: [], more: 0 });
});

test('a description keeps well-formed changes only; a refused revert lists its conflicts', () => {
  const described = describedFrom({ source: 'mode', changes: [retitle, null, { where: 'no id' }, move], warning: '' });
  assert.deepEqual(described, { source: 'mode', changes: [retitle, move], warning: null });
  assert.equal(describedFrom({ source: 'weird', changes: 'no' }).source, 'files');
  const refused = Object.assign(new Error('conflict'), {
    code: 'E_CONFLICT', details: { conflicts: [{ path: 'manifest.json', reason: 'changed since the turn' }, { nope: 1 }] },
  });
  assert.deepEqual(conflictsOf(refused), [{ path: 'manifest.json', reason: 'changed since the turn' }]);
  assert.deepEqual(conflictsOf(Object.assign(new Error('gone'), { code: 'E_NOT_FOUND', details: {} })), []);
});

test('the summary follows a language switch', async () => {
  await setLocale('zh-CN');
  try {
    assert.deepEqual(summaryOf([retitle]).shown, ['第 3 页：标题已修改']);
  } finally {
    await setLocale('en');
  }
});
