import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import './browser-globals.mjs';
import { EditHistory, HandEditor, mergeEdits, spliceOf } from '../../pneuma/web/lib/edits.js';

const sha = (text) => createHash('sha256').update(text, 'utf8').digest('hex');

// POST /api/edits as the server answers it, over an in-memory disk.
function fakeServer(disk) {
  const sent = [];
  const send = async (body) => {
    sent.push(body);
    if (sha(disk[body.path]) !== body.base_sha256) {
      const error = new Error('changed');
      error.code = 'E_CONFLICT';
      error.details = { current: disk[body.path], kept: '.pneuma/edits/conflicts/x' };
      throw error;
    }
    const changed = disk[body.path] !== body.content;
    disk[body.path] = body.content;
    return { ok: true, path: body.path, changed };
  };
  return { send, sent };
}

function editor(disk, choices = []) {
  const server = fakeServer(disk);
  const asked = [];
  const hand = new HandEditor({
    files: () => Object.entries(disk).map(([path, content]) => ({ path, content })),
    send: server.send,
    resolveConflict: async (conflict) => { asked.push(conflict); return choices.shift() || 'theirs'; },
  });
  return { hand, asked, sent: server.sent };
}

test('undo goes back through the hand edits in order, each over the text it undoes; redo forward', async () => {
  const disk = { 'a.md': 'one', 'b.md': 'uno' };
  const { hand } = editor(disk);
  assert.equal((await hand.editFile('a.md', 'two')).ok, true);
  assert.equal((await hand.editFile('b.md', 'dos')).ok, true);
  assert.equal((await hand.editFile('a.md', 'three')).ok, true);
  await hand.undo();
  assert.deepEqual(disk, { 'a.md': 'two', 'b.md': 'dos' });
  await hand.undo();
  assert.deepEqual(disk, { 'a.md': 'two', 'b.md': 'uno' });
  await hand.redo();
  assert.deepEqual(disk, { 'a.md': 'two', 'b.md': 'dos' });
  await hand.undo();
  await hand.undo();
  assert.deepEqual(disk, { 'a.md': 'one', 'b.md': 'uno' });
  assert.equal(await hand.undo(), null, 'nothing left to undo');
  await hand.editFile('a.md', 'fresh');
  assert.equal(await hand.redo(), null, 'a new edit ends what could be redone');
});

test('an undo after the agent wrote is a conflict; keeping theirs leaves the disk as the agent left it', async () => {
  const disk = { 'a.md': 'one' };
  const { hand, asked } = editor(disk, ['theirs']);
  await hand.editFile('a.md', 'two');
  disk['a.md'] = 'agent wrote';
  const result = await hand.undo();
  assert.equal(result.ok, false);
  assert.equal(result.code, 'E_CONFLICT');
  assert.equal(disk['a.md'], 'agent wrote');
  assert.deepEqual(asked.map((c) => [c.mine, c.theirs]), [['one', 'agent wrote']]);
});

test('"Use mine" sends the edit again over the text now on disk, and undo returns to theirs', async () => {
  const disk = { 'a.md': 'base' };
  const { hand, sent } = editor(disk, ['mine']);
  const result = await hand.editFile('a.md', 'mine', { base: 'stale' });
  assert.equal(result.ok, true);
  assert.equal(disk['a.md'], 'mine');
  assert.deepEqual(sent.map((b) => b.base_sha256), [sha('stale'), sha('base')]);
  await hand.undo();
  assert.equal(disk['a.md'], 'base');
});

test('the stacks keep at most their limit', () => {
  const history = new EditHistory(3);
  for (let n = 0; n < 5; n += 1) history.record({ path: 'a', before: `${n}`, after: `${n + 1}` });
  assert.deepEqual(history.undoable.map((e) => e.before), ['2', '3', '4']);
});

test('"Use mine" makes the person\'s change on the agent\'s text when they changed different parts', async () => {
  const base = '# Title\n\nFirst paragraph.\n\nLast paragraph.\n';
  const disk = { 'a.md': base.replace('Last paragraph.', 'Last paragraph, by the agent.') };
  const { hand, asked } = editor(disk, ['mine']);
  const result = await hand.editFile('a.md', base.replace('# Title', '# My title'), { base });
  assert.equal(result.ok, true);
  assert.equal(disk['a.md'], '# My title\n\nFirst paragraph.\n\nLast paragraph, by the agent.\n');
  assert.equal(asked[0].mine, disk['a.md'], 'the dialog shows what "Use mine" writes');
  await hand.undo();
  assert.equal(disk['a.md'], base.replace('Last paragraph.', 'Last paragraph, by the agent.'));
});

test('mergeEdits refuses changes that overlap', () => {
  assert.equal(mergeEdits('abc', 'aXc', 'aYc'), null);
  assert.equal(mergeEdits('abcdef', 'Xbcdef', 'abcdeY'), 'XbcdeY');
  assert.equal(mergeEdits('ab', 'aXb', 'aYb'), null, 'two insertions at one place');
  assert.deepEqual(spliceOf('hello world', 'hello there world'), { start: 6, end: 6, insert: 'there ' });
});

test('Ctrl-Z pressed while an edit is on its way undoes that edit once it is saved', async () => {
  const disk = { 'a.md': 'one' };
  const server = fakeServer(disk);
  let answer;
  const held = new Promise((resolve) => { answer = resolve; });
  // The server has written the file; its answer has not reached the page yet.
  const send = async (body) => { const reply = await server.send(body); if (body.content === 'two') await held; return reply; };
  const hand = new HandEditor({
    files: () => Object.entries(disk).map(([path, content]) => ({ path, content })),
    send,
    resolveConflict: async () => 'theirs',
  });
  let onKey = null;
  hand.listen({ addEventListener: (_type, fn) => { onKey = fn; }, removeEventListener() {} });
  const editing = hand.editFile('a.md', 'two');
  for (let i = 0; i < 100 && disk['a.md'] !== 'two'; i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(disk['a.md'], 'two');
  let prevented = false;
  onKey({ key: 'z', ctrlKey: true, metaKey: false, altKey: false, shiftKey: false, target: {}, preventDefault() { prevented = true; } });
  assert.equal(prevented, true, 'the key is the page\'s undo, not lost');
  answer();
  assert.equal((await editing).ok, true);
  await hand.busy;
  assert.equal(disk['a.md'], 'one');
  assert.equal(hand.history.redoable.length, 1);
});
