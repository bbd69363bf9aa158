// The dashboard's layout and title edits (plugins/dashboard/pneuma_dashboard/
// static/board-text.js): only the tile's own values change in the file's
// text; every other byte (the agent's formatting, other tiles) is kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { editTile, moveTile } from '../../plugins/dashboard/pneuma_dashboard/static/board-text.js';
import { csvRecords } from '../../plugins/dashboard/pneuma_dashboard/static/data.js';

const BOARD = `{
  "title": "T",
  "tiles": [
    {"id": "a", "type": "markdown", "title": "A \\"quoted\\" {x}", "x": 0, "y": 0, "w": 4, "h": 2, "text": "\\"x\\": 9"},
    {
      "id": "b",   "type": "chart",
      "x":1,"y" : 2, "w": 3, "h": 4,
      "spec": {"mark": "bar", "encoding": {"x": {"field": "x"}}}
    }
  ]
}
`;

test('a move changes only the four numbers of that tile', () => {
  const moved = moveTile(BOARD, 'b', { x: 5, y: 6, w: 7, h: 1 });
  assert.equal(moved, BOARD.replace('"x":1,"y" : 2, "w": 3, "h": 4', '"x":5,"y" : 6, "w": 7, "h": 1'));
  assert.deepEqual(JSON.parse(moved).tiles[0], JSON.parse(BOARD).tiles[0]);
});

test('a title is written as a JSON string, escapes and all', () => {
  const renamed = editTile(BOARD, 'a', { title: 'New "one" \\ here' });
  assert.equal(JSON.parse(renamed).tiles[0].title, 'New "one" \\ here');
  assert.equal(renamed.replace(/"title": "New[^\n]*?here",/, ''), BOARD.replace(/"title": "A[^\n]*?\{x\}",/, ''));
});

test('an unknown tile or a missing key is refused, not guessed', () => {
  assert.throws(() => moveTile(BOARD, 'zz', { x: 0, y: 0, w: 1, h: 1 }), /no tile with id "zz"/);
  assert.throws(() => editTile(BOARD, 'b', { title: 'B' }), /has no "title"/);
  assert.throws(() => moveTile('{"tiles": [', 'a', { x: 0, y: 0, w: 1, h: 1 }), SyntaxError);
});

test('CSV splits quoted fields, doubled quotes and CRLF like RFC 4180', () => {
  assert.deepEqual(csvRecords('\ufeffa,b\r\n"x, y","say ""hi"""\r\n1,\n'), [['a', 'b'], ['x, y', 'say "hi"'], ['1', '']]);
  assert.deepEqual(csvRecords('a\n"multi\nline"\n'), [['a'], ['multi\nline']]);
});
