// The illustrate viewer's reading of the workspace and its writes
// (plugins/illustrate/pneuma_illustrate/static/board.js, title-edit.js):
// the marks the next message names, choices.json written without losing
// other entries, and a title renamed with only its string changed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  layout, markChanges, parentChain, readChoices, writeChoices,
} from '../../plugins/illustrate/pneuma_illustrate/static/board.js';
import { replaceTitle } from '../../plugins/illustrate/pneuma_illustrate/static/title-edit.js';

const files = (entries) => Object.entries(entries).map(([path, content]) => (
  content === null ? { path, content: null, binary: true } : { path, content }));

test('the marks since the last message, one line each, in the agent\'s words', () => {
  const before = { a: { status: 'picked', starred: false, comment: '' }, b: { status: null, starred: true, comment: 'x' } };
  const after = { a: { status: 'rejected', starred: false, comment: '' }, b: { status: null, starred: false, comment: '' },
    c: { status: 'picked', starred: true, comment: 'warmer' } };
  assert.deepEqual(markChanges(before, after).map((c) => c.line), [
    'rejected a', 'unstarred b', 'removed the comment on b', 'picked c', 'starred c', 'comment on c: "warmer"',
  ]);
  assert.deepEqual(markChanges(after, after), []);
  assert.deepEqual(markChanges({ a: { status: 'picked' } }, {}).map((c) => c.line), ['no longer picked a']);
});

test('choices.json keeps the other entries and unknown fields when one mark is written', () => {
  const text = JSON.stringify({ a: { status: 'picked', starred: false, comment: '', note: 'kept' }, b: { status: null } });
  const next = JSON.parse(writeChoices(text, { b: { status: 'rejected', starred: true, comment: 'no' } }));
  assert.deepEqual(next, { a: { status: 'picked', starred: false, comment: '', note: 'kept' },
    b: { status: 'rejected', starred: true, comment: 'no' } });
  assert.deepEqual(JSON.parse(writeChoices(null, { c: { status: 'picked', starred: false, comment: '' } })),
    { c: { status: 'picked', starred: false, comment: '' } });
  const broken = readChoices(files({ 'choices.json': '{"a": ' }));
  assert.match(broken.error, /not valid JSON/);
  assert.deepEqual(readChoices(files({ 'choices.json': '{"a": {"status": "maybe", "starred": 1}}' })).choices,
    { a: { status: null, starred: false, comment: '' } });
});

test('rows in board order, images no row lists after them, a parent chain that ends on a loop', () => {
  const view = layout(files({
    'board.json': JSON.stringify({ title: 'T', rows: [{ id: 'r', title: 'R', prompt: 'p', images: ['x', 'y'] }] }),
    'images/x.png': null, 'images/x.json': JSON.stringify({ id: 'x', parent: 'y' }),
    'images/y.png': null, 'images/y.json': JSON.stringify({ id: 'y', parent: 'x' }),
    'images/z.webp': null,
  }));
  assert.deepEqual(view.rows.map((r) => [r.id, r.unlisted, r.images.map((c) => c.path)]),
    [['r', false, ['images/x.png', 'images/y.png']], ['', true, ['images/z.webp']]]);
  assert.deepEqual(parentChain('x', view.records), ['y']);
  assert.match(layout(files({ 'board.json': '[' })).error, /not valid JSON/);
  assert.match(layout(files({ 'board.json': '{"rows": 3}' })).error, /"rows" array/);
});

test('a title renamed in place changes only its string, or the data when it cannot be found once', () => {
  const text = '{\n  "title": "Board",\n  "rows": [\n    {"id": "a", "title": "Same", "images": []},\n'
    + '    {"id": "b", "title": "Other \\"q\\"", "images": []}\n  ]\n}\n';
  assert.equal(replaceTitle(text, 'b', 'New <b>'), text.replace('"Other \\"q\\""', '"New <b>"'));
  assert.equal(replaceTitle(text, null, 'Mine'), text.replace('"Board"', '"Mine"'));
  const twice = '{"title": "Same", "rows": [{"id": "a", "title": "Same"}]}';
  assert.deepEqual(JSON.parse(replaceTitle(twice, 'a', 'X')), { title: 'Same', rows: [{ id: 'a', title: 'X' }] });
  assert.equal(replaceTitle(text, 'nope', 'X'), null);
  assert.equal(replaceTitle('{', null, 'X'), null);
});

test('a board.json row the viewer cannot use is named, not dropped in silence', () => {
  const board = JSON.stringify({ title: 'T', rows: [null, { id: 'a', images: 'a-1' },
    { id: 'b', images: ['b-1', 7, null] }, { title: 'no id', images: [] }, { id: 'b', images: [] }] });
  const view = layout(files({ 'board.json': board }));
  assert.deepEqual(view.rows.map((r) => r.id), ['a', 'b', 'row-4']);
  assert.deepEqual(view.warnings, [
    'row 1 is not an object and is left out',
    'row "a": "images" is not a list of image ids',
    'row "b": 2 entries of "images" are not image ids and are left out',
    'row 4 has no "id" (shown as row-4)',
    'row 5 repeats the id "b" and is left out',
  ]);
  assert.deepEqual(layout(files({ 'board.json': '{"rows": []}' })).warnings, []);
});

test('a mark over a choices.json that does not parse is refused, the file left as the person has it', async () => {
  const { ChoicesWriter } = await import('../../plugins/illustrate/pneuma_illustrate/static/choices.js');
  const broken = files({ 'choices.json': '{"a": {"status": "picked"}, "b":' });
  const writes = [];
  const ctx = { files: broken, editFile: async (...args) => { writes.push(args); return { ok: true }; },
    writeFile: async (...args) => { writes.push(args); } };
  const answer = await new ChoicesWriter(ctx).set('c', { status: 'picked' }, broken);
  assert.equal(answer.ok, false);
  assert.match(answer.message, /choices\.json is not valid JSON/);
  assert.deepEqual(writes, []);
});

test('a written mark shows until the file snapshot catches up, not the stale snapshot in between', async () => {
  const { ChoicesWriter } = await import('../../plugins/illustrate/pneuma_illustrate/static/choices.js');
  const stale = files({ 'choices.json': '{"a": {"status": "picked", "starred": false, "comment": ""}}' });
  const ctx = { files: stale, editFile: async (path, text) => ({ ok: true, written: text }) };
  const writer = new ChoicesWriter(ctx);
  assert.equal((await writer.set('a', { status: null }, stale)).ok, true);
  assert.equal(writer.marks(stale).a.status, null); // the watcher has not delivered the write yet
  const fresh = files({ 'choices.json': '{"a": {"status": null, "starred": false, "comment": ""}}' });
  writer.fileChanged(fresh);
  assert.equal(writer.marks(fresh).a.status, null);
  // from then on the file is what counts (the agent may change it)
  const agent = files({ 'choices.json': '{"a": {"status": "rejected", "starred": false, "comment": ""}}' });
  writer.fileChanged(agent);
  assert.equal(writer.marks(agent).a.status, 'rejected');
});
