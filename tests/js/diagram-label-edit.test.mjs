// The diagram viewer's in-place label edit (plugins/diagram/pneuma_diagram/
// static/label-edit.js): only the label's characters change on its line, the
// delimiters and quoting stay right for mermaid, and what cannot be found
// exactly once is refused with the catalogue key the person reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { replaceLabel } from '../../plugins/diagram/pneuma_diagram/static/label-edit.js';

const SOURCE = [
  '%% a comment', 'flowchart TB', '  Server["aiohttp server"]', '  Shell <-->|"WebSocket"| Server',
  '  A[Foo] --> B[Foo]', '  A -- yes --> C', '  P((round))', '  Q[/trap/]', '  R[plain]', '  Server --> Cache', '',
].join('\n');

function edit(line, id, oldLabel, newLabel, source = SOURCE) {
  const result = replaceLabel(source, { line, id }, oldLabel, newLabel);
  if (result.error) return result.error;
  const before = source.split('\n');
  const after = result.content.split('\n');
  assert.equal(after.length, before.length);
  after.forEach((text, i) => { if (i !== line - 1) assert.equal(text, before[i], `line ${i + 1} changed`); });
  return after[line - 1];
}

test('a label between brackets, pipes, dashes or in a shape changes alone', () => {
  assert.equal(edit(3, 'Server', 'aiohttp server', 'web server'), '  Server["web server"]');
  assert.equal(edit(4, '', 'WebSocket', 'WS'), '  Shell <-->|"WS"| Server');
  assert.equal(edit(6, '', 'yes', 'no'), '  A -- no --> C');
  assert.equal(edit(7, 'P', 'round', 'circle'), '  P((circle))');
  assert.equal(edit(8, 'Q', 'trap', 'slope'), '  Q[/slope/]');
});

test('quotes are kept, added when the new text needs them, and escaped inside', () => {
  assert.equal(edit(3, 'Server', 'aiohttp server', 'say "hi"'), '  Server["say #quot;hi#quot;"]');
  assert.equal(edit(9, 'R', 'plain', 'a (b)'), '  R["a (b)"]');
  assert.equal(edit(9, 'R', 'plain', 'simple'), '  R[simple]');
});

test('two nodes with the same label on one line: the one whose id is given', () => {
  assert.equal(edit(5, 'B', 'Foo', 'Bar'), '  A[Foo] --> B[Bar]');
  assert.equal(edit(5, 'A', 'Foo', 'Bar'), '  A[Bar] --> B[Foo]');
  assert.equal(edit(5, '', 'Foo', 'Bar'), 'edit.ambiguous');
});

test('messages, members and aliases run to the end of the line', () => {
  const seq = 'sequenceDiagram\n  participant S as Pneuma server\n  S->>S: check; then go\n';
  assert.equal(edit(2, 'S', 'Pneuma server', 'host', seq), '  participant S as host');
  assert.equal(edit(3, '', 'check; then go', 'stop; now', seq), '  S->>S: stop#59; now');
  const cls = 'classDiagram\n  Duck : +swim()\n';
  assert.equal(edit(2, 'swim', '+swim()', '+fly()', cls), '  Duck : +fly()');
});

test('line endings and the rest of the file stay byte for byte', () => {
  const crlf = 'flowchart TB\r\n  A["one"]\r\n  B["two"]\r\n';
  const result = replaceLabel(crlf, { line: 2, id: 'A' }, 'one', 'uno');
  assert.equal(result.content, 'flowchart TB\r\n  A["uno"]\r\n  B["two"]\r\n');
  assert.equal(replaceLabel(SOURCE, { line: 3, id: 'Server' }, 'aiohttp server', 'aiohttp server').content, SOURCE);
});

test('what cannot be written is refused with the reason the person reads', () => {
  assert.equal(edit(10, 'Cache', 'Cache', 'Redis'), 'edit.unmapped'); // a bare id is no label
  assert.equal(edit(3, 'Server', 'aiohttp server', '   '), 'edit.empty');
  assert.equal(edit(3, 'Server', 'aiohttp server', 'two\nlines'), 'edit.multiline');
  assert.equal(edit(3, 'Server', 'something else', 'x'), 'edit.unmapped');
  assert.equal(edit(99, 'Server', 'aiohttp server', 'x'), 'edit.unmapped');
  assert.equal(edit(2, 'S', 'a', 'say "x"', 'sequenceDiagram\n  S->>S: "a"\n'), 'edit.quote');
});
