// The backend slot (lib/backend-ui.js), the store's extension point, and the
// native backend's browser module that uses both: the shell names no backend.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import './browser-globals.mjs';
import { createStore } from '../../pneuma/web/lib/store.js';
import { loadBackendUi, normalizeBackendUi } from '../../pneuma/web/lib/backend-ui.js';
import {
  applyBrowserMessage, initialBrowserState, mergeListing,
} from '../../pneuma/agents/native/static/browser-clients.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const quiet = async (run) => {
  const warn = console.warn;
  console.warn = () => {};
  try { return await run(); } finally { console.warn = warn; }
};

test('a session whose backend names no module gets an empty slot', async () => {
  assert.deepEqual(await loadBackendUi(null, {}), { header: [], overlays: [] });
});

test("a backend module's install() gets the context and its parts are shown", async () => {
  const Picker = () => null;
  const seen = [];
  const module = { install: (context) => { seen.push(context); return { overlays: [Picker], header: 'not a list' }; } };
  const ui = await loadBackendUi('/backends/x/ui.js', { store: 'S' }, async () => module);
  assert.deepEqual(ui, { header: [], overlays: [Picker] });
  assert.deepEqual(seen, [{ store: 'S' }]);
});

test('a backend module that fails to load or install leaves the page working', async () => {
  const missing = await quiet(() => loadBackendUi('/gone.js', {}, async () => { throw new Error('404'); }));
  assert.deepEqual(missing, { header: [], overlays: [] });
  const noInstall = await quiet(() => loadBackendUi('/odd.js', {}, async () => ({})));
  assert.deepEqual(noInstall, { header: [], overlays: [] });
  const throws = await quiet(() => loadBackendUi('/bad.js', {}, async () => ({ install() { throw new Error('x'); } })));
  assert.deepEqual(throws, { header: [], overlays: [] });
  assert.deepEqual(normalizeBackendUi(undefined), { header: [], overlays: [] });
});

test('the store hands the types it does not know to its extensions, in history too', () => {
  const store = createStore();
  const taken = [];
  const stop = store.extend((msg, { replaying }) => {
    if (msg.type !== 'gadget_update') return false;
    taken.push([msg.value, replaying]);
    return true;
  });
  store.receive({ type: 'gadget_update', seq: 1, value: 'live' });
  store.receive({ type: 'message_history', seq: 2, messages: [{ type: 'gadget_update', value: 'old' }] });
  store.receive({ type: 'user_message', seq: 3, content: 'hi' });
  stop();
  store.receive({ type: 'gadget_update', seq: 4, value: 'after' });
  assert.deepEqual(taken, [['live', false], ['old', true]]);
  assert.equal(store.state.browser, undefined); // the shell's store keeps no backend's state
});

test("native's module: the picker opens while a task waits and closes once a client is chosen", () => {
  const browser = initialBrowserState();
  const clients = [{ clientId: 'b1', name: 'Chromium', online: true }];
  assert.equal(applyBrowserMessage(browser, { type: 'browser_selection', status: 'waiting', candidates: clients }), true);
  assert.equal(browser.selection.status, 'waiting');
  assert.deepEqual(browser.clients, clients);
  applyBrowserMessage(browser, { type: 'browser_selection', status: 'selected', clientId: 'b1' });
  assert.equal(browser.selection, null);
  assert.equal(browser.selectedClientId, 'b1');
  applyBrowserMessage(browser, { type: 'twin_update', clientId: 'b1', twin: { tabs: [{ id: 1 }] } });
  assert.deepEqual(browser.twins.b1.tabs, [{ id: 1 }]);
  applyBrowserMessage(browser, { type: 'browser_selection', status: 'waiting' });
  applyBrowserMessage(browser, { type: 'task_update', task: { status: 'running' } });
  assert.equal(browser.selection, null);
  assert.equal(applyBrowserMessage(browser, { type: 'user_message' }), false);
});

test("native's module: the HTTP listing fills in only what the socket has not said", () => {
  const browser = initialBrowserState();
  applyBrowserMessage(browser, { type: 'extension_update', clients: [{ clientId: 'live' }], selectedClientId: 'live' });
  mergeListing(browser, { clients: [{ clientId: 'stale' }], selectedClientId: 'stale' });
  assert.deepEqual(browser.clients, [{ clientId: 'live' }]);
  assert.equal(browser.selectedClientId, 'live');
  const fresh = mergeListing(initialBrowserState(), { clients: [{ clientId: 'a' }], selectedClientId: 'a' });
  assert.equal(fresh.selectedClientId, 'a');
});

test('the shell names no backend', async () => {
  const files = ['app.js', 'boot.js', ...(await readdir(`${repo}pneuma/web/lib`)).map((f) => `lib/${f}`)]
    .filter((f) => f.endsWith('.js'));
  const named = [];
  for (const file of files) {
    const text = await readFile(`${repo}pneuma/web/${file}`, 'utf8');
    text.split('\n').forEach((line, i) => {
      if (/\b(native|claude|codex)\b/i.test(line)) named.push(`pneuma/web/${file}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(named, []);
});
