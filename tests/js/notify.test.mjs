import { test } from 'node:test';
import assert from 'node:assert/strict';
import './browser-globals.mjs';

const { initI18n } = await import('../../pneuma/web/lib/i18n.js');
await initI18n(); // the catalogues, through browser-globals' fetch
globalThis.fetch = async () => ({ ok: true, status: 200, json: async () => ({}) }); // preferences are not under test
const { Notifier, classify, isHeadlessClient } = await import('../../pneuma/web/lib/notify.js');
const { setPreference, preference } = await import('../../pneuma/web/lib/preferences.js');

function page({ hidden = true, permission = 'granted', client } = {}) {
  const listeners = {};
  const doc = {
    visibilityState: hidden ? 'hidden' : 'visible',
    get hidden() { return this.visibilityState === 'hidden'; },
    documentElement: { lang: 'en', dataset: client ? { client } : {} },
    addEventListener: (type, fn) => { (listeners[type] ||= []).push(fn); },
  };
  const shown = [];
  class Notification {
    constructor(title, options) { this.title = title; this.options = options; this.closed = false; shown.push(this); }
    close() { this.closed = true; }
    static requestPermission() { Notification.asked += 1; return Promise.resolve(Notification.answer); }
  }
  Notification.permission = permission;
  Notification.asked = 0;
  Notification.answer = 'granted';
  const win = { Notification, location: { search: '' }, addEventListener: () => {}, focus: () => {} };
  const fire = (type) => (listeners[type] || []).forEach((fn) => fn({ type }));
  return { doc, win, shown, fire, Notification };
}

const ended = { type: 'result', data: { subtype: 'success', is_error: false } };

test('what asks for the person: a turn ended or failed, a permission, a question', () => {
  assert.equal(classify(ended).kind, 'turnEnded');
  assert.equal(classify({ type: 'result', data: { subtype: 'error_during_execution', is_error: true } }).kind, 'turnFailed');
  assert.deepEqual(classify({ type: 'permission_request', request: { tool_name: 'Bash' } }), { kind: 'permission', tool: 'Bash' });
  assert.equal(classify({ type: 'permission_request', request: { tool_name: 'AskUserQuestion' } }).kind, 'question');
  assert.equal(classify({ type: 'permission_request', request: { tool_name: 'ExitPlanMode' } }).kind, 'question');
  assert.equal(classify({ type: 'cli_disconnected', exit_code: 3 }).kind, 'turnFailed');
  assert.equal(classify({ type: 'cli_disconnected', exit_code: 0 }), null);
  assert.equal(classify({ type: 'stream_event' }), null);
});

test('a hidden tab notifies and counts in the title until it is seen; a visible one does neither', () => {
  setPreference('notifications', null);
  const p = page();
  const notifier = new Notifier({ doc: p.doc, win: p.win, place: () => 'Slides · deck' }).attach();
  notifier.receive(ended);
  notifier.receive({ type: 'permission_request', request: { tool_name: 'Bash' } });
  assert.deepEqual(p.shown.map((n) => n.title), ['The agent finished its turn', 'The agent waits for your permission']);
  assert.equal(p.shown[1].options.body, 'Bash · Slides · deck');
  assert.equal(notifier.titleBadge(), '(2) ');
  p.doc.visibilityState = 'visible';
  p.fire('visibilitychange');
  assert.equal(notifier.titleBadge(), '');
  assert.ok(p.shown.every((n) => n.closed), 'what was seen is closed');
  notifier.receive(ended);
  assert.equal(p.shown.length, 2);
  assert.equal(notifier.titleBadge(), '');
});

test('notifications off: the badge still counts, no notification is shown', () => {
  setPreference('notifications', false);
  const p = page();
  const notifier = new Notifier({ doc: p.doc, win: p.win, place: () => '' });
  notifier.receive(ended);
  assert.equal(p.shown.length, 0);
  assert.equal(notifier.titleBadge(), '(1) ');
  setPreference('notifications', null);
});

test('the headless viewer never notifies', () => {
  assert.equal(isHeadlessClient({ documentElement: { dataset: {} } }, '?client=headless'), true);
  for (const p of [page({ client: 'headless' })]) {
    const notifier = new Notifier({ doc: p.doc, win: p.win, place: () => '' });
    notifier.receive(ended);
    assert.equal(p.shown.length, 0);
    assert.equal(notifier.titleBadge(), '');
  }
});

test('the browser is asked once, on the first message sent, and the answer is kept', async () => {
  setPreference('notifications', null);
  const p = page({ permission: 'default' });
  p.Notification.answer = 'denied';
  const notifier = new Notifier({ doc: p.doc, win: p.win, place: () => '' });
  await notifier.askOnce();
  await notifier.askOnce();
  assert.equal(p.Notification.asked, 1);
  assert.equal(preference('notifications'), false);
  // The switch asks again only if the browser never answered.
  p.Notification.permission = 'granted';
  assert.equal(await notifier.turnOn(true), true);
  assert.equal(preference('notifications'), true);
  assert.equal(p.Notification.asked, 1);
});
