import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  sha256Hex, sha256Bytes, htmlTextNodes, replaceHtmlText, escapeHtmlText, decodeHtmlText, markdownInlineRange,
} from '../../pneuma/web/lib/source-edit.js';

const nodeSha = (text) => createHash('sha256').update(text, 'utf8').digest('hex');

test('sha256Hex agrees with node for ascii, unicode and block-boundary lengths', async () => {
  for (const text of ['', 'abc', 'héllo 世界 🎉', 'x'.repeat(55), 'x'.repeat(56), 'y'.repeat(64), 'z'.repeat(1000)]) {
    assert.equal(await sha256Hex(text), nodeSha(text));
    const own = Array.from(sha256Bytes(new TextEncoder().encode(text)), (b) => b.toString(16).padStart(2, '0')).join('');
    assert.equal(own, nodeSha(text));
  }
});

test('htmlTextNodes lists visible text in order with offsets, skipping script, style and comments', () => {
  const source = '<!doctype html><html><head><title>T</title><style>p{color:red}</style></head>\n'
    + '<body>\n  <h1 class="a>b">Hello &amp; welcome</h1>\n<!-- <p>hidden</p> -->\n'
    + '<p>One<br>two <b>bold</b></p><script>if (a < b) { "</p>" }</script>\n<p>x &lt; y&nbsp;z</p></body></html>';
  const nodes = htmlTextNodes(source);
  assert.deepEqual(nodes.map((n) => n.text.trim()), ['T', 'Hello & welcome', 'One', 'two', 'bold', 'x < y\u00a0z']);
  for (const n of nodes) assert.equal(source.slice(n.start, n.end), n.raw);
  assert.deepEqual(nodes[1].parents, ['html', 'body', 'h1']);
  assert.deepEqual(nodes[4].parents, ['html', 'body', 'p', 'b']);
});

test('htmlTextNodes reads tag soup as the tree builder does: dropped tags join text, implied closes split it', () => {
  // The second <li> closes the first, so the last </li> closes nothing and is dropped: "0" and "0" are one node.
  const soup = '<body><li><li>a</li>0</li>0</body>';
  assert.deepEqual(htmlTextNodes(soup).map((n) => n.text), ['a', '00']);
  const joined = htmlTextNodes(soup)[1];
  assert.equal(joined.raw, '0</li>0');
  assert.equal(replaceHtmlText(soup, 1, 'zz'), '<body><li><li>a</li>zz</body>');
  // <div> closes the open <p>; the <b> it took along opens again around "y".
  const reopened = htmlTextNodes('<p><b>x<div>y</div></b>z</p>');
  assert.deepEqual(reopened.map((n) => [n.text, n.parents]), [['x', ['p', 'b']], ['y', ['div', 'b']], ['z', []]]);
  // A stray </span> after a block, a second <body>: dropped, the text goes on.
  assert.deepEqual(htmlTextNodes('<div>a</span>b<body>c</div>').map((n) => n.text), ['abc']);
  // A lone </p> makes an empty <p>: the text splits there.
  assert.deepEqual(htmlTextNodes('a</p>b').map((n) => n.text), ['a', 'b']);
});

test('replaceHtmlText changes only that text node, escaped, keeping its whitespace', () => {
  const source = '<section>\n  <h2>Old title</h2>\n  <p>Keep <em>me</em></p>\n</section>\n';
  const out = replaceHtmlText(source, 0, 'New <title> & more');
  assert.equal(out, '<section>\n  <h2>New &lt;title&gt; &amp; more</h2>\n  <p>Keep <em>me</em></p>\n</section>\n');
  assert.equal(replaceHtmlText(source, 2, 'me'), source, 'the same text changes nothing');
  const spaced = '<p>\n    text\n  </p>';
  assert.equal(replaceHtmlText(spaced, 0, 'other'), '<p>\n    other\n  </p>');
  assert.throws(() => replaceHtmlText(source, 9, 'x'), RangeError);
});

test('escapeHtmlText and decodeHtmlText round-trip', () => {
  for (const text of ['a & b < c > d', 'no\u00a0break', '&amp; literal', '“quotes” — dash']) {
    assert.equal(decodeHtmlText(escapeHtmlText(text)), text);
  }
  assert.equal(decodeHtmlText('&#x1F600;&#65;&copy;&unknown;'), '😀A©&unknown;');
});

const range = (source, a, b) => {
  const r = markdownInlineRange(source, a, b);
  return r && r.text;
};

test('markdownInlineRange finds a block\'s inline text without its markers', () => {
  const md = '# Title here #\n\nA paragraph with **bold**\nand a second line.\n\n- item one\n- [ ] task two\n'
    + '  1. nested *em*\n\n> quoted text\n\nSetext\n======\n\n## C#\n\n#\n';
  assert.equal(range(md, 0, 1), 'Title here');
  assert.equal(range(md, 2, 4), 'A paragraph with **bold**\nand a second line.');
  assert.equal(range(md, 5, 6), 'item one');
  assert.equal(range(md, 6, 7), 'task two');
  assert.equal(range(md, 7, 8), 'nested *em*');
  assert.equal(range(md, 9, 10), 'quoted text');
  assert.equal(range(md, 11, 13), 'Setext');
  assert.equal(range(md, 14, 15), 'C#');
  assert.equal(range(md, 16, 17), '');
  assert.equal(markdownInlineRange(md, 99, 100), null);
});

test('markdownInlineRange keeps CRLF endings and emphasis at the start of a paragraph', () => {
  const md = '# Head\r\n\r\n*stressed* start\r\nnext\r\n';
  const head = markdownInlineRange(md, 0, 1);
  assert.equal(head.text, 'Head');
  assert.equal(range(md, 2, 4), '*stressed* start\r\nnext');
  const edited = md.slice(0, head.start) + 'New head' + md.slice(head.end);
  assert.equal(edited, '# New head\r\n\r\n*stressed* start\r\nnext\r\n');
});
