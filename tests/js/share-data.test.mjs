// The shared file's player: which files a point shows, where each message
// belongs, how a viewer's request for a checkpoint is read (pneuma/share/static/share-data.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  timelinePoints, treeOf, messageTurns, labelIn, changeFile, parseStateRoute, decodeText,
} from '../../pneuma/share/static/share-data.js';

const data = {
  start: { 'a.md': 'h0' },
  turns: [
    { ref: '1', at: 100, tree: { 'a.md': 'h1' }, changes: [] },
    { ref: '2', at: 200, tree: { 'a.md': 'h2', 'b.md': 'h3' }, changes: [] },
  ],
};

test('a point shows the files its turn left; its before side the turn before', () => {
  assert.deepEqual(treeOf(data, '2', 'after'), { 'a.md': 'h2', 'b.md': 'h3' });
  assert.deepEqual(treeOf(data, '2', 'before'), { 'a.md': 'h1' });
  assert.deepEqual(treeOf(data, '1', 'before'), { 'a.md': 'h0' });
  assert.equal(treeOf(data, '9'), null);
});

test('without turns the timeline has the start alone', () => {
  const points = timelinePoints({ start: { 'x.md': 'h' }, turns: [] });
  assert.equal(points.length, 1);
  assert.deepEqual(treeOf({ start: { 'x.md': 'h' }, turns: [] }, 'start'), { 'x.md': 'h' });
});

test("a person's message starts the turn that names it; an answer belongs to its message's turn", () => {
  const points = timelinePoints({ turns: [
    { ref: '1', at: 100, message: 'Make a deck…', tree: {} },
    { ref: '2', at: 200, message: 'Retitle slide 2', tree: {} },
  ] });
  const conversation = [
    { role: 'user', text: 'Make a deck about  tea', at: 9999 },
    { role: 'assistant', text: 'Done', at: 9999 },
    { role: 'user', text: 'Retitle slide 2', at: 1 },
    { role: 'assistant', text: 'Done', at: 1 },
  ];
  assert.deepEqual(messageTurns(conversation, points), [0, 0, 1, 1]);
});

test('a message no turn names goes by its time', () => {
  const points = timelinePoints(data);
  const turns = messageTurns([{ role: 'user', text: 'x', at: 50 }, { role: 'assistant', at: 60 },
    { role: 'user', text: 'y', at: 150 }, { role: 'user', text: 'z', at: 900 }], points);
  assert.deepEqual(turns, [0, 0, 1, 1]);
});

test('labels follow the locale, then English', () => {
  assert.equal(labelIn({ en: 'Slide 3', 'zh-CN': '第 3 页' }, 'zh-CN'), '第 3 页');
  assert.equal(labelIn({ en: 'Slide 3' }, 'zh-CN'), 'Slide 3');
  assert.equal(labelIn('plain', 'en'), 'plain');
  assert.equal(changeFile({ locate: { file: 'slides/03.html' }, files: ['manifest.json'] }), 'slides/03.html');
  assert.equal(changeFile({ locate: null, files: ['a.md'] }), 'a.md');
});

test('the snapshot routes a viewer asks for are read back, encoded paths included', () => {
  assert.deepEqual(parseStateRoute('/api/checkpoints/3/state/after/files'), { ref: '3', side: 'after', file: null });
  assert.deepEqual(parseStateRoute('/api/checkpoints/3/state/before/content/assets/a%20b.png?v=1'),
    { ref: '3', side: 'before', file: 'assets/a b.png' });
  assert.equal(parseStateRoute('/api/files'), null);
  assert.equal(decodeText(new Uint8Array([0xff, 0xfe, 0x00])), null);
  assert.equal(decodeText(new TextEncoder().encode('中文')), '中文');
});

test("a site page's links resolve inside the point, never above it", async () => {
  const { resolvePath, snapshotPage, SITE_ORIGIN } = await import('../../pneuma/share/static/site-pages.js');
  assert.equal(resolvePath('blog/post.html', '../css/site.css?v=2'), 'css/site.css');
  assert.equal(resolvePath('index.html', './img/a%20b.png'), 'img/a b.png');
  assert.equal(resolvePath('index.html', '/js/app.js'), 'js/app.js');
  assert.equal(resolvePath('index.html', '../../etc/passwd'), null);
  assert.equal(resolvePath('index.html', 'https://example.com/x.css'), null);
  assert.deepEqual(snapshotPage(`${SITE_ORIGIN}/__pneuma__/snapshot/4/after/about.html?token=`),
    { ref: '4', side: 'after', page: 'about.html' });
  assert.equal(snapshotPage('https://elsewhere.example/__pneuma__/snapshot/4/after/a.html'), null);
});

test("a frame's image is pointed at its blob only when it names a file of the point", async () => {
  const { pathUnder, mapCss } = await import('../../pneuma/share/static/frame-assets.js');
  const base = 'file:///api/checkpoints/2/state/after/content/';
  assert.equal(pathUnder(`${base}assets/logo%201.svg?x`, base), 'assets/logo 1.svg');
  assert.equal(pathUnder('file:///etc/passwd', base), null);
  const urls = new Map([['assets/bg.png', 'blob:null/1']]);
  const resolve = (ref) => new URL(ref, base).href;
  assert.equal(mapCss('a{background:url("assets/bg.png")} b{background:url(other.png)}', resolve, urls, base),
    'a{background:url("blob:null/1")} b{background:url(other.png)}');
});
