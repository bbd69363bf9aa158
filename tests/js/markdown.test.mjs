import { test } from 'node:test';
import assert from 'node:assert/strict';
import './browser-globals.mjs';
import { renderMarkdown, escapeHtml, highlight, languageOf } from '../../pneuma/web/lib/markdown.js';

test("the agent's raw HTML is shown as text, never as markup", () => {
  const out = renderMarkdown('hello <script>alert(1)</script> <img src=x onerror=alert(1)>');
  assert.doesNotMatch(out, /<script>/);
  assert.doesNotMatch(out, /<img/);
  assert.match(out, /&lt;script&gt;/);
});

test('links open in a new tab without an opener', () => {
  const out = renderMarkdown('see https://example.org');
  assert.match(out, /<a href="https:\/\/example.org" target="_blank" rel="noopener noreferrer">/);
});

test('fenced code is highlighted with its language', () => {
  const out = renderMarkdown('```python\ndef f():\n    return 1\n```');
  assert.match(out, /<code class="hljs language-python">/);
  assert.match(out, /hljs-keyword/);
});

test('unknown languages and paths are escaped, not highlighted', () => {
  assert.equal(highlight('<b>', 'no-such-language'), '&lt;b&gt;');
  assert.equal(escapeHtml('"&"'), '&quot;&amp;&quot;');
  assert.equal(languageOf('deck/slide-01.html'), 'xml');
  assert.equal(languageOf('notes.txt'), null);
});
