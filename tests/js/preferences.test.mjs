import { test } from 'node:test';
import assert from 'node:assert/strict';
import './browser-globals.mjs';

const sent = [];
let served = { locale: 'zh-CN', chatWidth: 610, chatHidden: { editor: true }, draft: 'unsent' };
globalThis.fetch = async (url, options = {}) => {
  if (options.method === 'POST') {
    sent.push(JSON.parse(options.body));
    return { ok: true, status: 200, json: async () => ({}) };
  }
  if (String(url) === '/api/preferences') return { ok: true, status: 200, json: async () => served };
  return { ok: false, status: 404, json: async () => ({}) };
};

const { loadPreferences, preference, setPreference, save, MAX_DRAFT_CHARS } = await import('../../pneuma/web/lib/preferences.js');

test('the person\'s preferences come from the server, not from this origin\'s storage', async () => {
  localStorage.setItem('pneuma.preferences', JSON.stringify({ locale: 'en', chatWidth: 300 }));
  const read = await loadPreferences();
  assert.equal(read.locale, 'zh-CN');
  assert.equal(preference('chatWidth'), 610);
  assert.equal(preference('draft'), 'unsent');
  // The cache keeps the person's choices, never a workspace's draft.
  assert.deepEqual(JSON.parse(localStorage.getItem('pneuma.preferences')),
    { locale: 'zh-CN', chatWidth: 610, chatHidden: { editor: true } });
});

test('a burst of changes is one write with only what changed; a long draft is capped', async () => {
  sent.length = 0;
  setPreference('chatWidth', 500);
  setPreference('chatWidth', 520);
  setPreference('chatHidden', { app: true });
  setPreference('draft', 'x'.repeat(MAX_DRAFT_CHARS + 10));
  assert.deepEqual(preference('chatHidden'), { editor: true, app: true });
  await save();
  assert.equal(sent.length, 1);
  assert.deepEqual(Object.keys(sent[0]).sort(), ['chatHidden', 'chatWidth', 'draft']);
  assert.equal(sent[0].chatWidth, 520);
  assert.deepEqual(sent[0].chatHidden, { app: true });
  assert.equal(sent[0].draft.length, MAX_DRAFT_CHARS);
  await save();
  assert.equal(sent.length, 1, 'nothing left to send is no request');
});
