// The shared file's page (docs/sharing.md, "The page"): the artifact drawn
// by the mode's own viewer, read-only, as Compare draws a checkpoint
// (lib/compare.js's SnapshotViewer, over this file's data instead of the
// checkpoint store); the conversation, each message with the one Markdown
// renderer (lib/markdown.js) and its tool calls collapsed; and the timeline
// of turns: choosing one shows the artifact as that turn left it and what
// the turn changed. The data is the JSON document of pneuma/share/model.py,
// in <script id="pneuma-share">; boot.js has mapped every module and
// answers the few fetches a viewer makes from the page itself.

import { h } from '/static/lib/viewer-helpers.js';
import { SnapshotViewer, stateUrl } from '/static/lib/compare.js';
import { renderMarkdown } from '/static/lib/markdown.js';
import { initI18n, t, getLocale, setLocale, onLocaleChange, localized, LOCALES, LOCALE_NAMES } from '/static/lib/i18n.js';
import { timelinePoints, treeOf, messageTurns, labelIn, changeFile, parseStateRoute, decodeText, typeOf } from './share-data.js';
import { mapFrameAssets } from './frame-assets.js';
import { SITE_ORIGIN, snapshotPage, inlinePage } from './site-pages.js';

const share = window.pneumaShare;
const data = JSON.parse(document.getElementById('pneuma-share').textContent || '{}');
const manifest = (data.viewer && data.viewer.manifest) || { name: data.mode, viewerApi: {} };
const points = timelinePoints(data);

// ---- The files, unpacked on demand ------------------------------------------

const unpacked = new Map(); // content hash -> Promise<Uint8Array>
const blobUrls = new Map(); // content hash and type -> blob: URL

function unpack(hash) {
  if (!unpacked.has(hash)) {
    const packed = (data.files || {})[hash];
    unpacked.set(hash, (async () => {
      if (packed == null) throw new Error(`the file lacks the content ${hash}`);
      const bytes = Uint8Array.from(atob(packed), (c) => c.charCodeAt(0));
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
      return new Uint8Array(await new Response(stream).arrayBuffer());
    })());
  }
  return unpacked.get(hash);
}

async function blobUrl(hash, type) {
  const key = `${hash} ${type}`;
  if (!blobUrls.has(key)) blobUrls.set(key, URL.createObjectURL(new Blob([await unpack(hash)], { type })));
  return blobUrls.get(key);
}

/** A side of a point as GET /api/checkpoints/{ref}/state/{side}/files answers it. */
async function fileList(tree) {
  const rows = [];
  for (const path of Object.keys(tree).sort()) {
    const bytes = await unpack(tree[path]);
    const content = decodeText(bytes);
    rows.push(content == null ? { path, content: null, size: bytes.length, binary: true } : { path, content, size: bytes.length });
  }
  return rows;
}

// The viewer asks for a point's files as it asks the session's server.
share.addRoute((path) => {
  const route = parseStateRoute(path);
  if (!route) return null;
  const tree = treeOf(data, route.ref, route.side);
  if (!tree) return share.jsonResponse(404, { code: 'E_NOT_FOUND', message: `no point ${route.ref} in this file` });
  if (!route.file) return fileList(tree).then((files) => share.jsonResponse(200, { ref: route.ref, side: route.side, files }));
  const hash = tree[route.file];
  if (!hash) return share.jsonResponse(404, { code: 'E_NOT_FOUND', message: `${route.file} is not in this point` });
  return unpack(hash).then((bytes) => new Response(new Blob([bytes], { type: typeOf(route.file) })));
});

// A site-like mode's viewer asks where the content site is (GET
// /api/<mode>/site, webcraft's) and loads its snapshot pages from there: the
// stand-in origin is never reached, each page is put together from the
// point's files (site-pages.js) and shown in its frame by boot.js.
let pointFiles = new Map(); // the shown point's files: path -> {bytes, text}
share.addRoute((path) => (path.split('?')[0] === `/api/${data.mode}/site`
  ? share.jsonResponse(200, { origin: SITE_ORIGIN, token: '' }) : null));
share.addFrameSource((url) => {
  const page = snapshotPage(url);
  return page ? inlinePage(page.page, pointFiles, typeOf, share.nonce) : null;
});
// Any other page a viewer frames lives on a server (the WebGAL engine's
// site): say so in the frame rather than leave the browser's broken-page icon.
share.addFrameSource((url) => {
  if (!url || /^(blob:|data:|about:|javascript:)/i.test(url)) return null;
  const style = 'font:14px/1.5 system-ui,sans-serif;color:#6b6b76;display:grid;place-items:center;height:100vh;margin:0;padding:0 24px;text-align:center';
  const text = t('sharePage.notInFile').replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' }[c]));
  return `<!doctype html><html><body style="${style}"><p>${text}</p></body></html>`;
});

// ---- The artifact ------------------------------------------------------------

/** SnapshotViewer over a point of this file: a file's URL is its blob. */
class SharedSnapshot extends SnapshotViewer {
  constructor(options) {
    super(options);
    this.urls = options.urls;
  }

  ctx() {
    const ctx = super.ctx();
    const base = ctx.contentUrl;
    ctx.contentUrl = (path) => this.urls.get(path) || base(path);
    return ctx;
  }
}

const liveCtx = {
  get mode() { return manifest; },
  params: {},
  files: [],
  items: () => [],
  t: (key, params) => t(key, params),
  get locale() { return getLocale(); },
  onLocaleChange: (listener) => onLocaleChange(listener),
};
const host = { mode: manifest, module: null, ctx: () => liveCtx };

async function loadViewer() {
  const address = data.viewer && data.viewer.module;
  if (!address) return null;
  try {
    const imported = await import(address);
    return imported.default || imported;
  } catch (error) {
    console.error('pneuma: the viewer of this file failed to load', error);
    return null;
  }
}

// ---- The page ----------------------------------------------------------------

const root = document.getElementById('share-root');
const els = {
  title: h('h1', { class: 'share-title' }),
  meta: h('span', { class: 'share-meta' }),
  note: h('span', { class: 'share-note' }),
  langs: h('div', { class: 'share-langs', role: 'group' }),
  stage: h('div', { class: 'share-stage compare-viewer', 'data-state': 'loading' }),
  chatTitle: h('h2', { class: 'share-chat-title' }),
  chat: h('ol', { class: 'share-chat' }),
  ticks: h('div', { class: 'share-ticks', role: 'group' }),
  slider: h('input', { class: 'share-slider', type: 'range', min: '1', max: String(points.length), step: '1' }),
  previous: h('button', { type: 'button', class: 'share-step', 'data-step': '-1' }),
  next: h('button', { type: 'button', class: 'share-step', 'data-step': '1' }),
  turnLabel: h('div', { class: 'share-turn-label', 'aria-live': 'polite' }),
  turnMessage: h('div', { class: 'share-turn-message' }),
  changesTitle: h('h3', { class: 'share-changes-title' }),
  changes: h('ul', { class: 'share-changes' }),
};

let current = points.length - 1;
let viewer = null;
let stopAssets = () => {};
let showing = 0; // which show() is the latest, so an older one gives way

function layout() {
  root.replaceChildren(
    h('header', { class: 'share-header' }, els.title, els.meta, els.note, els.langs),
    h('main', { class: 'share-main' },
      h('section', { class: 'share-viewer' }, els.stage),
      h('aside', { class: 'share-side' }, els.chatTitle, els.chat)),
    h('footer', { class: 'share-timeline' },
      h('div', { class: 'share-scrub' }, els.previous, els.slider, els.next),
      els.ticks,
      h('div', { class: 'share-turn' }, els.turnLabel, els.turnMessage, els.changesTitle, els.changes)));
  els.previous.addEventListener('click', () => go(current - 1));
  els.next.addEventListener('click', () => go(current + 1));
  els.slider.addEventListener('input', () => go(Number(els.slider.value) - 1));
  for (const point of points) {
    els.ticks.append(h('button', { type: 'button', class: 'share-tick', 'data-turn': String(point.index + 1),
      onclick: () => go(point.index) }, String(point.index + 1)));
  }
  renderChat();
}

function relabel() {
  const locale = getLocale();
  document.title = data.title ? `${data.title} · Pneuma` : 'Pneuma';
  els.title.textContent = data.title || localized(manifest.displayName) || data.mode;
  const when = data.createdAt ? new Date(data.createdAt).toLocaleString(locale) : '';
  els.meta.textContent = t('sharePage.meta', { mode: localized(manifest.displayName) || data.mode, date: when });
  els.note.textContent = t('sharePage.readOnly');
  els.langs.setAttribute('aria-label', t('lang.label'));
  els.langs.replaceChildren(...LOCALES.map((code) => h('button', { type: 'button', class: 'share-lang', lang: code,
    'data-locale': code, 'aria-pressed': String(code === locale),
    onclick: () => setLocale(code).catch((error) => console.error(error)) }, LOCALE_NAMES[code])));
  els.chatTitle.textContent = t('sharePage.conversation');
  els.previous.textContent = '‹';
  els.previous.title = t('sharePage.previous');
  els.previous.setAttribute('aria-label', t('sharePage.previous'));
  els.next.textContent = '›';
  els.next.title = t('sharePage.next');
  els.next.setAttribute('aria-label', t('sharePage.next'));
  els.slider.setAttribute('aria-label', t('sharePage.timeline'));
  els.ticks.setAttribute('aria-label', t('sharePage.timeline'));
  els.changesTitle.textContent = t('sharePage.changes');
  for (const tick of els.ticks.children) tick.title = t('sharePage.turn', { turn: tick.dataset.turn });
  renderChatLabels();
  renderTurn();
}

function renderChat() {
  const conversation = Array.isArray(data.conversation) ? data.conversation : [];
  const turns = messageTurns(conversation, points);
  els.chat.replaceChildren();
  if (!conversation.length) {
    els.chat.append(h('li', { class: 'share-chat-empty' }));
    return;
  }
  conversation.forEach((message, index) => {
    const body = h('div', { class: 'share-msg-body markdown' });
    // Raw HTML is off in the one renderer: a message cannot add markup.
    body.innerHTML = renderMarkdown(message.text || '');
    const tools = Array.isArray(message.tools) && message.tools.length
      ? h('details', { class: 'share-tools' }, h('summary', { class: 'share-tools-summary' }),
        h('ul', {}, message.tools.map((tool) => h('li', {}, h('code', { text: tool.name || '' }), ' ', tool.summary || ''))))
      : null;
    const turn = turns[index];
    els.chat.append(h('li', { class: 'share-msg', 'data-role': message.role, 'data-turn': String(turn + 1),
      'data-count': String((message.tools || []).length) },
    h('div', { class: 'share-msg-head' }, h('span', { class: 'share-msg-role' }),
      h('button', { type: 'button', class: 'share-msg-turn', onclick: () => go(turn) })),
    body, tools));
  });
}

function renderChatLabels() {
  for (const item of els.chat.querySelectorAll('.share-msg')) {
    item.querySelector('.share-msg-role').textContent = item.dataset.role === 'user' ? t('sharePage.person') : t('sharePage.agent');
    const turnButton = item.querySelector('.share-msg-turn');
    turnButton.textContent = t('sharePage.turn', { turn: item.dataset.turn });
    turnButton.title = t('sharePage.showTurn', { turn: item.dataset.turn });
    const summary = item.querySelector('.share-tools-summary');
    if (summary) summary.textContent = t('sharePage.tools', { count: Number(item.dataset.count) });
  }
  const empty = els.chat.querySelector('.share-chat-empty');
  if (empty) empty.textContent = t('sharePage.noConversation');
}

function renderTurn() {
  const point = points[current];
  const locale = getLocale();
  els.slider.value = String(current + 1);
  els.previous.disabled = current <= 0;
  els.next.disabled = current >= points.length - 1;
  for (const tick of els.ticks.children) tick.setAttribute('aria-pressed', String(Number(tick.dataset.turn) === current + 1));
  els.turnLabel.textContent = data.turns && data.turns.length
    ? t('sharePage.turnOf', { turn: current + 1, count: points.length }) : t('sharePage.start');
  els.turnMessage.textContent = point.turn.message || '';
  const changes = Array.isArray(point.turn.changes) ? point.turn.changes : [];
  els.changes.replaceChildren(...(changes.length ? changes.map((change) => {
    const file = changeFile(change);
    return h('li', { class: 'share-change', 'data-kind': change.kind || '' },
      h('button', { type: 'button', class: 'share-change-open', disabled: !file,
        onclick: () => file && viewer && viewer.reveal(file) },
      h('span', { class: 'share-change-where', text: labelIn(change.where, locale) }),
      h('span', { class: 'share-change-what', text: labelIn(change.what, locale) })));
  }) : [h('li', { class: 'share-change-none', text: t('sharePage.noChanges') })]));
  for (const item of els.chat.querySelectorAll('.share-msg')) {
    item.toggleAttribute('data-later', Number(item.dataset.turn) > current + 1);
  }
  const last = [...els.chat.querySelectorAll('.share-msg:not([data-later])')].pop();
  if (last) last.scrollIntoView({ block: 'nearest' });
}

/** The file the work last touched by point `index`: its own first change, else the latest before it. */
function lastChangedFile(index) {
  for (let at = index; at >= 0; at -= 1) {
    const tree = points[index].turn.tree || {};
    const file = (points[at].turn.changes || []).map(changeFile).find((path) => path && path in tree);
    if (file) return file;
  }
  return null;
}

/** Show point `index`: the viewer over its files, its changes, the chat up to it. */
async function go(index) {
  const next = Math.max(0, Math.min(points.length - 1, index));
  if (next === current && viewer) return;
  current = next;
  renderTurn();
  await show();
}

async function show() {
  const mine = ++showing;
  const point = points[current];
  const tree = point.turn.tree || {};
  const urls = new Map();
  const files = new Map();
  await Promise.all(Object.entries(tree).map(async ([path, hash]) => {
    const bytes = await unpack(hash);
    files.set(path, { bytes, text: decodeText(bytes) });
    urls.set(path, await blobUrl(hash, typeOf(path)));
  }));
  if (mine !== showing) return;
  pointFiles = files;
  stopAssets();
  if (viewer) viewer.destroy();
  // "ready" again only once this point is drawn (tests and a person's wait alike).
  root.dataset.state = 'loading';
  root.dataset.turn = String(current + 1);
  els.stage.dataset.state = 'loading';
  viewer = new SharedSnapshot({ host, ref: point.ref, side: 'after', element: els.stage, urls });
  stopAssets = mapFrameAssets(els.stage, urls, new URL(`${stateUrl(point.ref, 'after')}/content/`, location.href).href);
  await viewer.start();
  if (mine !== showing) return;
  const shown = lastChangedFile(current);
  if (shown) await viewer.reveal(shown);
  root.dataset.state = els.stage.dataset.state === 'error' ? 'error' : 'ready';
}

async function main() {
  await initI18n();
  host.module = await loadViewer();
  layout();
  relabel();
  onLocaleChange(relabel);
  await show();
}

main().catch((error) => {
  console.error('pneuma: the shared file could not be shown', error);
  root.dataset.state = 'error';
  root.replaceChildren(h('p', { class: 'share-failed', role: 'alert', text: t('sharePage.failed', { message: error.message }) }));
});
