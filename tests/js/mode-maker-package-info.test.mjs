// What the mode-maker reads of the package from the page's file snapshot
// (plugins/mode-maker/pneuma_mode_maker/static/package-info.js): the entry
// point's package, the manifest's summary, the seed files Play mounts the
// viewer on, and which changes reload Play.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  affectsPlay, entryPoint, readPackage, seedSamples, sharedImports, viewerAssets, viewerModules,
} from '../../plugins/mode-maker/pneuma_mode_maker/static/package-info.js';

const PYPROJECT = '[project]\nname = "pneuma-kanban"\n\n[project.entry-points.pneuma]\nkanban = "pneuma_kanban"\n\n[tool.x]\na = "b"\n';
const MANIFEST = {
  name: 'kanban', version: '0.2.0', displayName: { en: 'Kanban', 'zh-CN': '看板' },
  viewer: { module: 'viewer.js' }, init: { seedFiles: { 'seeds/': '.', 'extra/board.json': 'boards/main.json' } },
  viewerApi: { actions: [{ id: 'show-card', label: { en: 'Show', fr: 'Montrer' } }] },
  tools: [{ name: 'move_card' }],
};
const FILES = [
  { path: 'pyproject.toml', content: PYPROJECT },
  { path: 'pneuma_kanban/manifest.json', content: JSON.stringify(MANIFEST) },
  { path: 'pneuma_kanban/static/viewer.js', content: 'import { h } from "/static/lib/viewer-helpers.js";\nimport "./x.js";' },
  { path: 'pneuma_kanban/static/logo.png', binary: true },
  { path: 'pneuma_kanban/seeds/welcome.md', content: '# Hi' },
  { path: 'pneuma_kanban/seeds/cards/a.card', binary: true },
  { path: 'pneuma_kanban/extra/board.json', content: '{}' },
];

test('the entry point names the package, wherever the table sits', () => {
  assert.deepEqual(entryPoint(PYPROJECT), { mode: 'kanban', package: 'pneuma_kanban' });
  assert.equal(entryPoint('[project]\nname = "x"\n'), null);
  assert.deepEqual(entryPoint('[project.entry-points.pneuma]\n"my-mode" = "pneuma_my_mode.plugin:x"\n'),
    { mode: 'my-mode', package: 'pneuma_my_mode' });
});

test('the summary lists actions, tools and every locale the texts carry', () => {
  const pkg = readPackage(FILES);
  assert.equal(pkg.error, null);
  assert.deepEqual(pkg.summary.actions, ['show-card']);
  assert.deepEqual(pkg.summary.tools, ['move_card']);
  assert.deepEqual(pkg.summary.locales, ['en', 'fr', 'zh-CN']);
  assert.match(readPackage([{ path: 'pyproject.toml', content: PYPROJECT }]).error, /manifest\.json is missing/);
  assert.match(readPackage([FILES[0], { path: 'pneuma_kanban/manifest.json', content: '{' }]).error, /JSON/);
});

test('Play gets the static modules as text, the rest as assets, and the seeds where a workspace gets them', () => {
  const pkg = readPackage(FILES);
  assert.deepEqual(Object.keys(viewerModules(FILES, pkg)), ['viewer.js']);
  assert.deepEqual(viewerAssets(FILES, pkg), [{ path: 'pneuma_kanban/static/logo.png', key: 'logo.png' }]);
  assert.deepEqual(sharedImports(Object.values(viewerModules(FILES, pkg))), ['/static/lib/viewer-helpers.js']);
  assert.deepEqual(seedSamples(FILES, pkg).map((s) => [s.source.path, s.path]), [
    ['pneuma_kanban/seeds/welcome.md', 'welcome.md'],
    ['pneuma_kanban/seeds/cards/a.card', 'cards/a.card'],
    ['pneuma_kanban/extra/board.json', 'boards/main.json'],
  ]);
});

test('a change reloads Play unless it is Python or outside the package', () => {
  const pkg = readPackage(FILES);
  assert.equal(affectsPlay('pneuma_kanban/static/viewer.js', pkg), true);
  assert.equal(affectsPlay('pyproject.toml', pkg), true);
  assert.equal(affectsPlay('pneuma_kanban/tools.py', pkg), false);
  assert.equal(affectsPlay('notes.md', pkg), false);
});
