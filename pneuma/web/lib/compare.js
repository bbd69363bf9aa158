// "Compare" on a turn (docs/checkpoints.md, "Compare and the timeline"): the
// workspace before the turn beside (or under a slider over) the workspace as
// the turn left it, each drawn by the mode's own viewer, read-only, in a panel
// over the live viewer. Nothing is restored: each side's files come from the
// checkpoint store (GET /api/checkpoints/{ref}/state/{before|after}/files,
// bytes under .../content/, served with workspace content's isolation).
//
// A side is a second mount of the viewer module the live ViewerHost loaded,
// with a read-only ctx (`ctx.readOnly`, docs/viewer-contract.md): no
// selection reaches the composer, no write, edit or capture reaches the
// server, nothing is sent to the agent. The live viewer is left as it was:
// its instance is never touched, and what the snapshot viewers keep in
// sessionStorage (a deck's position) is put back when the panel closes.
// Opened by the `pneuma:compare` event ({detail: {ref}}), which the chat's
// turn row dispatches (lib/rewind.js).

import { h, fetchJson } from './viewer-helpers.js';
import { deriveItems } from './viewer-host.js';
import { genericViewer } from './generic-viewer.js';
import { t, getLocale, onLocaleChange } from './i18n.js';

// How long a side may take to draw before it counts as drawn anyway.
const RENDER_WAIT_MS = 8000;
// Where a content site serves a checkpoint's pages (webcraft's viewer frames
// them from there when given ctx.snapshot): those are not the live site.
const SNAPSHOT_PATH = '/__pneuma__/snapshot/';

function encodePath(path) {
  return String(path).split('/').map(encodeURIComponent).join('/');
}

/** Where one side of checkpoint `ref` is served. */
export function stateUrl(ref, side) {
  return `/api/checkpoints/${encodeURIComponent(ref)}/state/${side}`;
}

function refused() {
  const error = new Error(t('compare.readOnly'));
  error.code = 'E_FORBIDDEN';
  return Promise.reject(error);
}

/** Every iframe under `element` has loaded (or the wait ran out). */
function framesLoaded(element, loaded, started) {
  if (performance.now() - started > RENDER_WAIT_MS) return true;
  for (const frame of element.querySelectorAll('iframe')) {
    if (loaded.has(frame)) continue;
    let doc = null;
    try {
      doc = frame.contentDocument;
    } catch {
      doc = null;
    }
    const drawn = doc && doc.readyState === 'complete' && doc.URL !== 'about:blank';
    if (!drawn) return false;
  }
  return true;
}

/**
 * The mode's viewer over one side of a checkpoint, read-only.
 * `element` receives data-state="loading" | "ready" | "error".
 */
export class SnapshotViewer {
  constructor({ host, ref, side, element, onActiveFile = () => {} }) {
    this.host = host;
    this.ref = ref;
    this.side = side;
    this.element = element;
    this.onActiveFile = onActiveFile;
    this.files = [];
    this.instance = null;
    this.module = null;
    this.stopLocale = [];
    this.destroyed = false;
  }

  ctx() {
    const viewer = this;
    const base = `${stateUrl(this.ref, this.side)}/content/`;
    const ctx = {};
    // What the live ctx offers (params, mode, t, locale …), then what must
    // differ for a read-only snapshot.
    Object.defineProperties(ctx, Object.getOwnPropertyDescriptors(this.host.ctx()));
    Object.defineProperties(ctx, {
      files: { get: () => viewer.files, enumerable: true, configurable: true },
      locale: { get: () => getLocale(), enumerable: true, configurable: true },
    });
    return Object.assign(ctx, {
      readOnly: true,
      snapshot: { ref: this.ref, side: this.side },
      items: () => viewer.items(),
      contentUrl: (path) => `${base}${encodePath(path)}`,
      baseUrl: base,
      writeFile: refused,
      deleteFile: refused,
      // As ctx.editFile answers a refusal: never a throw (docs/viewer-contract.md, "Edit in place").
      editFile: async () => ({ ok: false, code: 'E_FORBIDDEN', message: t('compare.readOnly') }),
      saveCapture: refused,
      setSelection: () => {},
      setActiveFile: (path) => { if (!viewer.destroyed && path) viewer.onActiveFile(path, viewer); },
      confirm: () => Promise.resolve(false),
      sendMessage: () => {},
      onLocaleChange: (listener) => {
        const stop = onLocaleChange(listener);
        viewer.stopLocale.push(stop);
        return stop;
      },
    });
  }

  items() {
    const resolve = this.module && this.module.resolveItems;
    if (typeof resolve === 'function') {
      try {
        return resolve.call(this.module, this.files) || [];
      } catch (error) {
        console.error('pneuma: resolveItems failed', error);
      }
    }
    return deriveItems(this.host.mode.viewerApi && this.host.mode.viewerApi.workspace, this.files);
  }

  /** Fetch the side's files, mount the viewer, resolve once it has drawn. */
  async start() {
    if (await this.mount()) await this.finish();
    return this;
  }

  /** Fetch the side's files and mount the viewer: true when mounted. */
  async mount() {
    this.element.dataset.state = 'loading';
    try {
      const body = await fetchJson(`${stateUrl(this.ref, this.side)}/files`);
      if (this.destroyed) return false;
      this.files = body.files || [];
      this.module = this.host.module || genericViewer;
      this.element.replaceChildren();
      this.instance = await this.module.mount(this.element, this.ctx());
      return !this.destroyed;
    } catch (error) {
      if (this.destroyed) return false;
      console.error('pneuma: a snapshot viewer failed', error);
      this.element.dataset.state = 'error';
      this.element.replaceChildren(h('div', { class: 'compare-problem', role: 'alert',
        text: t('compare.failed', { message: error.message }) }));
      return false;
    }
  }

  /** Once mounted: wait until it has drawn, then say so (data-state="ready"). */
  async finish() {
    await this.drawn();
    if (this.destroyed || this.element.dataset.state !== 'loading') return;
    this.element.dataset.state = 'ready';
    if (this.showsLiveSite()) {
      // Its pages come from the content site, which serves the workspace as
      // it is now (docs/checkpoints.md, "Compare and the timeline"): say so.
      this.element.dataset.liveSite = 'true';
      this.element.prepend(h('div', { class: 'compare-live-site', role: 'note', text: t('compare.liveSite') }));
    }
  }

  /** Whether a frame of the viewer shows a live page of another origin (the
   *  content site), not the checkpoint's pages the site serves under
   *  /__pneuma__/snapshot/ (pneuma/server/snapshot_site.py). */
  showsLiveSite() {
    return [...this.element.querySelectorAll('iframe[src]')].some((frame) => {
      try {
        const url = new URL(frame.getAttribute('src'), location.href);
        return /^https?:$/.test(url.protocol) && url.origin !== location.origin
          && !url.pathname.startsWith(SNAPSHOT_PATH);
      } catch {
        return false;
      }
    });
  }

  /** `frames` animation frames from now (two after a mount: the viewer has
   *  laid out), and every iframe of the viewer loaded. */
  drawn(frames = 3) {
    const loaded = new WeakSet();
    const started = performance.now();
    const listen = () => {
      for (const frame of this.element.querySelectorAll('iframe')) {
        if (!frame.dataset.compareWatched) {
          frame.dataset.compareWatched = '1';
          frame.addEventListener('load', () => loaded.add(frame));
        }
      }
    };
    return new Promise((resolve) => {
      let seen = 0;
      const tick = () => {
        if (this.destroyed) return resolve();
        listen();
        seen += 1;
        if (seen >= frames && framesLoaded(this.element, loaded, started)) return resolve();
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
  }

  /** Show `path` ("follow" viewers): true if the viewer shows it now. */
  async reveal(path) {
    const instance = this.instance;
    const follows = Array.isArray(this.module && this.module.capabilities)
      && this.module.capabilities.includes('follow');
    if (!follows || !instance || typeof instance.reveal !== 'function') return false;
    try {
      return (await instance.reveal(path)) === true;
    } catch {
      return false;
    }
  }

  destroy() {
    this.destroyed = true;
    for (const stop of this.stopLocale.splice(0)) stop();
    try {
      if (this.instance && this.instance.destroy) this.instance.destroy();
    } catch (error) {
      console.error(error);
    }
    this.instance = null;
    this.element.replaceChildren();
  }
}

/** sessionStorage as it is now; the returned function puts it back. */
export function keepSessionStorage(storage = globalThis.sessionStorage) {
  const kept = new Map();
  try {
    for (let i = 0; i < storage.length; i += 1) {
      const key = storage.key(i);
      kept.set(key, storage.getItem(key));
    }
  } catch {
    return () => {};
  }
  return () => {
    try {
      const now = [];
      for (let i = 0; i < storage.length; i += 1) now.push(storage.key(i));
      for (const key of now) if (!kept.has(key)) storage.removeItem(key);
      for (const [key, value] of kept) if (storage.getItem(key) !== value) storage.setItem(key, value);
    } catch {
      /* storage gone: nothing to put back */
    }
  };
}

/**
 * The files a turn changed, most telling first: the spots its described
 * changes name (GET /api/checkpoints/{ref}/changes), then its files.
 */
export async function changedPaths(ref) {
  const paths = [];
  const add = (path) => { if (typeof path === 'string' && path) paths.push(path); };
  const [described, files] = await Promise.allSettled([
    fetchJson(`/api/checkpoints/${encodeURIComponent(ref)}/changes`),
    fetchJson(`/api/checkpoints/${encodeURIComponent(ref)}`),
  ]);
  if (described.status === 'fulfilled') {
    for (const change of described.value.changes || []) {
      const locate = change.locate || {};
      add(locate.file);
      add(locate.path);
      for (const file of change.files || []) add(file);
    }
  }
  if (files.status === 'fulfilled') {
    const changes = files.value.changes || {};
    for (const kind of ['modified', 'added', 'removed']) for (const file of changes[kind] || []) add(file);
  }
  return [...new Set(paths)];
}

/** Both sides on the first changed file the viewer can show (a deck: the same slide). */
async function showFirstChange(before, after, paths) {
  for (const path of paths) {
    const shownAfter = await after.reveal(path);
    const shownBefore = await before.reveal(path);
    if (shownAfter || shownBefore) return path;
  }
  return null;
}

let open = null; // the panel on screen: {close}

/** Close the compare panel, if one is open. */
export function closeCompare() {
  if (open) open.close();
}

/**
 * Open the compare panel for checkpoint `ref` over `panel` (the viewer's
 * section), with the live ViewerHost `host`. Resolves with the panel once
 * both sides have drawn.
 */
export async function openCompare({ ref, host, panel, layout = 'side' }) {
  closeCompare();
  const putBack = keepSessionStorage();
  const sides = {};
  const bodies = {};
  const sideLabels = {};
  for (const side of ['before', 'after']) {
    bodies[side] = h('div', { class: 'compare-viewer', 'data-state': 'loading' });
    sideLabels[side] = h('div', { class: 'compare-side-label' });
    sides[side] = h('section', { class: 'compare-side', 'data-side': side }, sideLabels[side], bodies[side]);
  }
  const slider = h('input', { type: 'range', class: 'compare-slider', min: '0', max: '100', value: '50' });
  const stage = h('div', { class: 'compare-stage', 'data-layout': layout }, sides.before, sides.after, slider);
  const layoutButton = (name) => h('button', { type: 'button', class: 'btn compare-layout',
    'data-layout': name, 'aria-pressed': String(layout === name), onclick: () => setLayout(name) });
  const layouts = { side: layoutButton('side'), over: layoutButton('over') };
  const closeButton = h('button', { type: 'button', class: 'btn compare-close', onclick: () => close() });
  const title = h('span', { class: 'compare-title' });
  const hint = h('span', { class: 'compare-hint' });
  const group = h('div', { class: 'compare-layouts', role: 'group' }, layouts.side, layouts.over);
  const root = h('div', { class: 'compare-panel', role: 'dialog', 'aria-modal': 'false', tabindex: '-1',
    'data-ref': ref }, h('div', { class: 'compare-bar' }, title, hint, group, closeButton), stage);

  // Every word of the panel, again after a language switch.
  const relabel = () => {
    sideLabels.before.textContent = t('compare.before', { turn: ref });
    sideLabels.after.textContent = t('compare.after', { turn: ref });
    slider.setAttribute('aria-label', t('compare.sliderLabel'));
    layouts.side.textContent = t('compare.sideBySide');
    layouts.over.textContent = t('compare.over');
    group.setAttribute('aria-label', t('compare.layout'));
    closeButton.textContent = t('compare.close');
    closeButton.title = t('compare.closeTitle');
    title.textContent = t('compare.title', { turn: ref });
    root.setAttribute('aria-label', title.textContent);
    hint.textContent = t('compare.readOnlyHint');
  };
  relabel();
  const stopRelabel = onLocaleChange(relabel);

  function setLayout(name) {
    stage.dataset.layout = name;
    for (const button of root.querySelectorAll('.compare-layout')) {
      button.setAttribute('aria-pressed', String(button.dataset.layout === name));
    }
  }
  const split = () => stage.style.setProperty('--compare-split', `${slider.value}%`);
  slider.addEventListener('input', split);
  split();

  // Moving through one side moves the other to the same file.
  let following = false;
  const follow = async (path, from) => {
    if (following) return;
    following = true;
    try {
      await (from === viewers.before ? viewers.after : viewers.before).reveal(path);
    } finally {
      following = false;
    }
  };
  const viewers = {};
  for (const side of ['before', 'after']) {
    viewers[side] = new SnapshotViewer({ host, ref, side, element: bodies[side], onActiveFile: follow });
  }

  // Escape closes it; keys meant for a viewer do not reach the live one.
  const onKey = (e) => {
    if (!root.isConnected || document.querySelector('.rewind-dialog-root')) return;
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      close();
    } else if (e.target === document.body) {
      e.stopPropagation();
    }
  };
  window.addEventListener('keydown', onKey, true);

  function close() {
    if (!root.isConnected) return;
    window.removeEventListener('keydown', onKey, true);
    stopRelabel();
    viewers.before.destroy();
    viewers.after.destroy();
    root.remove();
    putBack();
    if (open && open.root === root) open = null;
    panel.dispatchEvent(new CustomEvent('pneuma:compare-closed', { bubbles: true }));
  }

  open = { root, close, viewers };
  panel.append(root);
  root.focus({ preventScroll: true });
  // Marks for benchmarks/bench_compare.py: where the time to both renders goes.
  const mark = (name) => { try { performance.mark(`compare:${name}`); } catch { /* no timeline */ } };
  mark('open');
  const paths = changedPaths(ref);
  // Drawn first, then moved to the changed spot: a viewer whose frames have
  // loaded repaints them in place (the slide viewer), cheaper than a reload.
  await Promise.all([viewers.before.start(), viewers.after.start()]);
  mark('mounted');
  if (root.isConnected) {
    following = true;
    try {
      const shown = await showFirstChange(viewers.before, viewers.after, await paths);
      if (shown) root.dataset.file = shown;
    } finally {
      following = false;
    }
    mark('revealed');
    await Promise.all([viewers.before.drawn(1), viewers.after.drawn(1)]);
    mark('ready');
    if (root.isConnected) root.dataset.ready = 'true';
  }
  return open;
}

/** Listen for `pneuma:compare` ({detail: {ref}}) on `target` (the window). */
export function attachCompare({ target = window, host, panel }) {
  const onCompare = (event) => {
    const ref = event.detail && event.detail.ref;
    const live = host();
    if (ref == null || !live || !live.ready) return;
    openCompare({ ref: String(ref), host: live, panel: panel() });
  };
  target.addEventListener('pneuma:compare', onCompare);
  return () => target.removeEventListener('pneuma:compare', onCompare);
}
