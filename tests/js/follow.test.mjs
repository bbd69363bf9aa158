import { test } from 'node:test';
import assert from 'node:assert/strict';
import './browser-globals.mjs';

const { initI18n } = await import('../../pneuma/web/lib/i18n.js');
await initI18n();
globalThis.fetch = async () => ({ ok: true, status: 200, json: async () => ({}) }); // preferences are not under test
const { AgentFollower, TURN_TAIL_MS, agentChanges, personIsBusy } = await import('../../pneuma/web/lib/follow.js');
const { setPreference } = await import('../../pneuma/web/lib/preferences.js');

function viewer({ capabilities = ['follow'], shows = ['slides/01.html', 'slides/03.html'] } = {}) {
  return {
    capabilities,
    revealed: [],
    items: () => shows.map((path) => ({ path })),
    async reveal(path) { this.revealed.push(path); return shows.includes(path); },
    problems: () => ({}),
  };
}

function follower(host, { running = true, busy = null, now = 1000 } = {}) {
  const state = { running, busy, now };
  const f = new AgentFollower({ host: () => host, running: () => state.running, busy: () => state.busy, now: () => state.now });
  return { f, state };
}

const wrote = (...paths) => ({ type: 'content_update', files: paths.map((path) => ({ path, content: 'x', origin: 'external' })) });

test('only what the agent wrote counts, once each, without deletions', () => {
  assert.deepEqual(agentChanges([
    { path: 'a.md', origin: 'self' }, { path: 'b.md', origin: 'external' }, { path: 'b.md', origin: 'external' },
    { path: 'c.md', origin: 'external', deleted: true }, { path: 'd.md', origin: 'external' },
  ]), ['b.md', 'd.md']);
});

test('a turn writing a file the viewer shows brings it to the front', async () => {
  const host = viewer();
  const { f } = follower(host);
  assert.equal(await f.receive(wrote('notes.txt', 'slides/03.html')), 'revealed');
  assert.deepEqual(host.revealed, ['slides/03.html'], 'the file the viewer lists goes first');
  assert.equal(f.revealed, 'slides/03.html');
});

test('a busy person gets a notice instead; Show reveals what changed', async () => {
  const host = viewer();
  const { f, state } = follower(host, { busy: 'typing' });
  assert.equal(await f.receive(wrote('slides/03.html')), 'notice');
  assert.equal(await f.receive(wrote('slides/01.html')), 'notice');
  assert.deepEqual(host.revealed, []);
  assert.deepEqual(f.notice.paths, ['slides/01.html', 'slides/03.html']);
  state.busy = null;
  assert.equal(await f.show(), 'slides/01.html');
  assert.equal(f.notice, null);
});

test('nothing moves: follow off, a viewer without "follow", or a change long after the turn', async () => {
  setPreference('followAgent', false);
  const off = viewer();
  assert.equal(await follower(off).f.receive(wrote('slides/03.html')), null);
  setPreference('followAgent', null);
  const plain = viewer({ capabilities: [] });
  assert.equal(await follower(plain).f.receive(wrote('slides/03.html')), null);
  const late = viewer();
  const { f, state } = follower(late, { running: false });
  f.receive({ type: 'result', data: {} });
  state.now += TURN_TAIL_MS / 2;
  assert.equal(await f.receive(wrote('slides/03.html')), 'revealed', 'just after the turn still counts');
  state.now += TURN_TAIL_MS * 2;
  assert.equal(await f.receive(wrote('slides/01.html')), null);
  assert.deepEqual([off.revealed, plain.revealed, late.revealed], [[], [], ['slides/03.html']]);
});

test('the person is busy while typing, a marked element is open, or a chip is set', () => {
  const el = (extra = {}) => ({ tagName: 'DIV', contains: () => false, ...extra });
  const doc = (parts) => ({
    body: el(), activeElement: parts.active || null,
    querySelector: (selector) => parts[selector] || null,
  });
  assert.equal(personIsBusy(doc({ '.composer textarea': { value: 'half a thought' } }), null), 'typing');
  assert.equal(personIsBusy(doc({ '.composer textarea': { value: '  ' } }), null), null);
  assert.equal(personIsBusy(doc({ '[data-pneuma-busy], .pin-item.editing': el() }), null), 'marked');
  assert.equal(personIsBusy(doc({}), { file: 'a.md', text: 'a phrase' }), 'selection');
  // Where the person is (the slide or section on screen) is not something they picked.
  assert.equal(personIsBusy(doc({}), { file: 'slides/01.html', index: 1, title: 'Intro' }), null);
  assert.equal(personIsBusy(doc({}), { file: 'a.md', section: 'Intro', text: null }), null);
  assert.equal(personIsBusy(doc({}), { file: 'a.md', tag: 'h1', ambient: true }), null);
  const editing = el({ isContentEditable: true });
  assert.equal(personIsBusy(doc({ '.viewer-root': el({ contains: (x) => x === editing }), active: editing }), null), 'editing');
});
