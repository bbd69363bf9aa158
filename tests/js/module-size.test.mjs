// Browser modules stay small enough to read: no product JavaScript file over
// 800 lines (issue 24). Fetched and bundled third-party code is not ours.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const LIMIT = 800;
const FETCHED = new Set(['vendor', 'node_modules', 'engine', 'dist', 'web']);

async function jsFiles(dir) {
  const found = [];
  let entries = [];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (entry.isDirectory()) {
      if (!FETCHED.has(entry.name)) found.push(...await jsFiles(`${dir}/${entry.name}`));
    } else if (entry.name.endsWith('.js')) found.push(`${dir}/${entry.name}`);
  }
  return found;
}

test(`no product JavaScript file is over ${LIMIT} lines`, async () => {
  const roots = [`${repo}pneuma/web`];
  for (const backend of await readdir(`${repo}pneuma/agents`)) roots.push(`${repo}pneuma/agents/${backend}/static`);
  for (const mode of await readdir(`${repo}plugins`)) roots.push(`${repo}plugins/${mode}/pneuma_${mode}/static`);
  const files = (await Promise.all(roots.map(jsFiles))).flat();
  assert.ok(files.length > 30, 'too few modules found: has the tree moved?');
  const big = [];
  for (const file of files) {
    const lines = (await readFile(file, 'utf8')).split('\n').length - 1;
    if (lines > LIMIT) big.push(`${file.slice(repo.length)}: ${lines}`);
  }
  assert.deepEqual(big, []);
});
