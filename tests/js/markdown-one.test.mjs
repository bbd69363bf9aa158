// One Markdown parser for the whole page: the chat and every viewer use the
// shell's markdown-it (lib/markdown-it.js), pinned once in pneuma/web/package.json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import './browser-globals.mjs';
import { MarkdownIt } from '../../pneuma/web/lib/markdown-it.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));

test("the shell's markdown-it is a constructor with its own options each", () => {
  const plain = new MarkdownIt({ html: false });
  const raw = new MarkdownIt({ html: true });
  assert.match(plain.render('<b>x</b>'), /&lt;b&gt;/);
  assert.match(raw.render('<b>x</b>'), /<b>x<\/b>/);
});

test('markdown-it is pinned once, by the shell, to an exact version', async () => {
  const shell = JSON.parse(await readFile(`${repo}pneuma/web/package.json`, 'utf8'));
  assert.match(shell.dependencies['markdown-it'], /^\d+\.\d+\.\d+$/);
  const others = [];
  for (const plugin of await readdir(`${repo}plugins`)) {
    const path = `${repo}plugins/${plugin}/web/package.json`;
    if (!existsSync(path)) continue;
    const pkg = JSON.parse(await readFile(path, 'utf8'));
    const deps = { ...pkg.dependencies, ...pkg.devDependencies };
    if ('markdown-it' in deps || 'marked' in deps) others.push(`plugins/${plugin}/web/package.json`);
  }
  assert.deepEqual(others, []);
});

test('viewers that render Markdown import the shell\'s markdown-it', async () => {
  const viewers = [];
  for (const plugin of await readdir(`${repo}plugins`)) {
    const dir = `${repo}plugins/${plugin}/pneuma_${plugin}/static`;
    if (!existsSync(dir)) continue;
    for (const file of (await readdir(dir)).filter((f) => f.endsWith('.js'))) {
      const text = await readFile(`${dir}/${file}`, 'utf8');
      if (/MarkdownIt|markdownit/.test(text)) viewers.push([`${plugin}/${file}`, text.includes('/static/lib/markdown-it.js')]);
    }
  }
  assert.ok(viewers.length >= 1);
  assert.deepEqual(viewers.filter(([, shared]) => !shared), []);
});
