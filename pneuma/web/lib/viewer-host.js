// The shell side of docs/viewer-contract.md: loads the mode's viewer module,
// mounts it with `ctx`, feeds it file changes and action requests, and turns
// its selection into the <viewer-context> of the next message.

import { genericViewer } from './generic-viewer.js';
import { fetchJson } from './viewer-helpers.js';
import { t, getLocale, onLocaleChange, localized } from './i18n.js';
import { HandEditor } from './edits.js';

// The shell's JSON calls; a failure carries the server's one error shape
// (docs/errors.md) on the thrown Error (see fetchJson).
const api = { json: fetchJson };
export { api };

// The label shown for a localized manifest text ("x" or {en, zh-CN}) in the
// page's language; kept exported here for the modules that import it from here.
export { localized };

/** Workspace items derived from viewerApi.workspace (docs/mode-authors.md, "How the viewer organises files"). */
export function deriveItems(workspace, files) {
  const textFiles = files.filter((f) => !f.binary);
  const byName = (a, b) => a.path.localeCompare(b.path, undefined, { numeric: true });
  const label = (path) => path.split('/').pop();
  const type = workspace && workspace.type;
  if (type === 'manifest' && workspace.manifestFile) {
    const manifest = files.find((f) => f.path === workspace.manifestFile);
    try {
      const data = JSON.parse(manifest && manifest.content);
      const list = Array.isArray(data)
        ? data
        : Object.values(data || {}).find((v) => Array.isArray(v)) || [];
      const items = [];
      list.forEach((entry, index) => {
        const path = typeof entry === 'string' ? entry : entry && (entry.file || entry.path || entry.src);
        if (typeof path !== 'string') return;
        const title = typeof entry === 'object' && (entry.title || entry.label || entry.name);
        items.push({ path, label: title || label(path), index, metadata: typeof entry === 'object' ? entry : {} });
      });
      return items;
    } catch {
      return [];
    }
  }
  const sorted = [...textFiles].sort(byName);
  const items = sorted.map((f, index) => ({ path: f.path, label: label(f.path), index, metadata: {} }));
  return type === 'single' ? items.slice(0, 1) : items;
}

function contentPath(path) {
  return String(path).split('/').map(encodeURIComponent).join('/');
}

function attr(value) {
  return String(value).replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
}

/** A short label for the selection chip ("Slide 3 · h1 “Our plan”"). */
export function selectionLabel(selection) {
  if (selection == null) return '';
  if (typeof selection === 'string') return selection.slice(0, 80);
  if (selection.label) return String(selection.label);
  const parts = [];
  const where = selection.file || selection.path;
  if (where) parts.push(String(where).split('/').pop());
  const tag = selection.tagName || selection.tag || selection.type;
  if (tag) parts.push(String(tag).toLowerCase());
  const text = selection.text || selection.textContent;
  if (text) {
    const t = String(text).replace(/\s+/g, ' ').trim();
    parts.push(`“${t.length > 48 ? `${t.slice(0, 47)}…` : t}”`);
  } else if (Array.isArray(selection.ids) && selection.ids.length) {
    parts.push(t('selection.count', { count: selection.ids.length }));
  }
  return parts.join(' · ') || t('selection.label');
}

/**
 * Normalise what runAction resolved to into {success, message?, data?}, the
 * only shape the server accepts.
 */
export function normalizeResult(actionId, value) {
  if (value === undefined || value === null) return { success: true };
  if (typeof value !== 'object' || typeof value.success !== 'boolean') {
    return { success: true, data: { value } };
  }
  const result = { ...value };
  if (result.message != null && typeof result.message !== 'string') result.message = String(result.message);
  if (result.data != null && (typeof result.data !== 'object' || Array.isArray(result.data))) {
    result.data = { value: result.data };
  }
  if (result.message == null) delete result.message;
  if (result.data == null) delete result.data;
  return result;
}

export class ViewerHost {
  /**
   * @param {object} o
   * @param {object} o.config          GET /api/config
   * @param {HTMLElement} o.element    where the viewer renders
   * @param {object} o.shell           {setSelection, setActiveFile, confirm, sendMessage, onItems}
   */
  constructor({ config, element, shell }) {
    this.config = config;
    this.mode = config.mode;
    this.element = element;
    this.shell = shell;
    this.files = [];
    this.versions = new Map(); // path -> counter for cache-busting URLs
    this.module = null;
    this.instance = null;
    this.selection = null;
    this.activeFile = null;
    this.ready = false;
    this.queue = []; // what arrived before the viewer was mounted
    this.loadError = null;
    this.generic = false;
    this.localeListeners = new Set(); // ctx.onLocaleChange callbacks of the mounted viewer
    // Edit in place: ctx.editFile, the conflict dialog, Ctrl-Z (lib/edits.js).
    this.edits = new HandEditor({ files: () => this.files });
    this.stopEditKeys = typeof document !== 'undefined' && document.addEventListener ? this.edits.listen(document) : () => {};
    this.stopLocale = onLocaleChange((locale) => {
      for (const listener of [...this.localeListeners]) {
        try {
          listener(locale);
        } catch (error) {
          console.error('pneuma: a viewer locale listener failed', error);
        }
      }
    });
  }

  ctx() {
    const host = this;
    return {
      get mode() { return host.mode; },
      get params() { return host.config.params || {}; },
      get files() { return host.files; },
      items: () => host.items(),
      contentUrl: (path) => `/content/${contentPath(path)}?v=${host.versions.get(path) || 0}`,
      baseUrl: '/content/',
      writeFile: (path, content) => api.json('/api/files', { method: 'POST', json: { path, content } }),
      deleteFile: (path) => api.json(`/api/files?path=${encodeURIComponent(path)}`, { method: 'DELETE' }),
      editFile: (path, content, options) => host.edits.editFile(path, content, options),
      setSelection: (selection) => {
        // While annotating, a selection becomes a review pin (lib/pins.js).
        if (host.shell.takeSelection && host.shell.takeSelection(selection)) return;
        host.selection = selection == null ? null : selection;
        host.shell.setSelection(host.selection);
      },
      setActiveFile: (path) => {
        host.activeFile = path || null;
        host.shell.setActiveFile(host.activeFile);
      },
      saveCapture: (name, dataUrl) => api.json('/api/captures', { method: 'POST', json: { name, data: dataUrl } }),
      confirm: (summary, details) => host.shell.confirm(summary, details),
      sendMessage: (text) => host.shell.sendMessage(text),
      // Language (viewer contract, "Language"): the shell's translator, the
      // locale in use ("en" or "zh-CN"), and a callback after each switch.
      t: (key, params) => t(key, params),
      get locale() { return getLocale(); },
      onLocaleChange: (listener) => {
        host.localeListeners.add(listener);
        return () => host.localeListeners.delete(listener);
      },
    };
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
    return deriveItems(this.mode.viewerApi && this.mode.viewerApi.workspace, this.files);
  }

  async start() {
    const filesPromise = api.json('/api/files').then((body) => body.files || []);
    let module = null;
    const spec = this.mode.viewer && this.mode.viewer.module;
    if (spec) {
      const url = `${this.config.modeStaticUrl || `/modes/${this.mode.name}/`}${spec}`;
      try {
        const imported = await import(url);
        module = imported.default || imported;
        if (typeof module.mount !== 'function') throw new Error(`${spec} has no default export with mount()`);
      } catch (error) {
        console.error(`pneuma: the ${this.mode.name} viewer failed to load`, error);
        this.loadError = t('viewer.loadFailed', { name: localized(this.mode.displayName) || this.mode.name, message: error.message });
        module = null;
      }
    }
    try {
      this.files = await filesPromise;
    } catch (error) {
      this.loadError = t('viewer.listFailed', { message: error.message });
      this.files = [];
    }
    for (const f of this.files) this.versions.set(f.path, f.mtime || 0);
    if (!module) {
      module = genericViewer;
      this.generic = true;
    }
    this.module = module;
    this.element.replaceChildren();
    try {
      this.instance = await module.mount(this.element, this.ctx());
    } catch (error) {
      console.error('pneuma: mounting the viewer failed', error);
      this.loadError = t('viewer.mountFailed', { message: error.message });
      this.module = genericViewer;
      this.generic = true;
      this.element.replaceChildren();
      this.instance = genericViewer.mount(this.element, this.ctx());
    }
    this.ready = true;
    const queued = this.queue.splice(0);
    for (const job of queued) job();
    return this;
  }

  /** content_update: apply to the snapshot, then tell the viewer. */
  contentUpdate(changes) {
    if (!this.ready) {
      this.queue.push(() => this.contentUpdate(changes));
      return;
    }
    const byPath = new Map(this.files.map((f) => [f.path, f]));
    for (const change of changes || []) {
      if (!change || typeof change.path !== 'string') continue;
      this.versions.set(change.path, (this.versions.get(change.path) || 0) + 1);
      if (change.deleted) {
        byPath.delete(change.path);
        continue;
      }
      const previous = byPath.get(change.path) || {};
      byPath.set(change.path, {
        ...previous,
        path: change.path,
        content: change.binary ? null : change.content,
        binary: !!change.binary,
        mtime: Date.now() / 1000,
      });
    }
    this.files = [...byPath.values()].sort((a, b) => a.path.localeCompare(b.path));
    if (this.instance && typeof this.instance.update === 'function') {
      try {
        this.instance.update(this.files, changes || []);
      } catch (error) {
        console.error('pneuma: viewer update failed', error);
      }
    }
    this.shell.onItems && this.shell.onItems();
  }

  /** mode_event: a message from the mode's own server side, for its viewer. */
  modeEvent(name, data) {
    if (!this.ready) {
      this.queue.push(() => this.modeEvent(name, data));
      return;
    }
    const instance = this.instance;
    if (!instance || typeof instance.onModeEvent !== 'function') return;
    try {
      instance.onModeEvent(name, data);
    } catch (error) {
      console.error('pneuma: viewer onModeEvent failed', error);
    }
  }

  /** What the viewer declared beyond showing and selecting (viewer contract,
   *  "Annotate, edit in place, follow the agent"): ["annotate", "edit", "follow"]. */
  get capabilities() {
    const declared = this.module && this.module.capabilities;
    return Array.isArray(declared) ? declared.filter((c) => typeof c === 'string') : [];
  }

  /** Bring `path` to the front ("follow"): true if the viewer shows it now. */
  async reveal(path) {
    if (!this.ready) await new Promise((resolve) => this.queue.push(resolve));
    const instance = this.instance;
    if (!this.capabilities.includes('follow') || !instance || typeof instance.reveal !== 'function') return false;
    try {
      return (await instance.reveal(path)) === true;
    } catch (error) {
      console.error('pneuma: viewer reveal failed', error);
      return false;
    }
  }

  /** The files the viewer knows are broken, {path: reason} ("follow"). */
  problems() {
    const instance = this.instance;
    if (!instance || typeof instance.problems !== 'function') return {};
    try {
      const found = instance.problems();
      return found && typeof found === 'object' ? found : {};
    } catch (error) {
      console.error('pneuma: viewer problems() failed', error);
      return {};
    }
  }

  /** viewer_action_request → runAction → the result for viewer_action_response. */
  async runAction(actionId, params) {
    if (!this.ready) {
      await new Promise((resolve) => this.queue.push(resolve));
    }
    const instance = this.instance;
    if (!instance || typeof instance.runAction !== 'function') {
      return { success: false, message: `'${actionId}' is not supported by this viewer` };
    }
    try {
      return normalizeResult(actionId, await instance.runAction(actionId, params || {}));
    } catch (error) {
      return { success: false, message: (error && error.message) || String(error) };
    }
  }

  /** The <viewer-context> text for the next message, or null. */
  context() {
    if (this.selection == null || !this.module) return null;
    try {
      const text = this.module.extractContext
        ? this.module.extractContext(this.selection, this.files)
        : null;
      if (text) return String(text);
    } catch (error) {
      console.error('pneuma: extractContext failed', error);
    }
    const label = selectionLabel(this.selection);
    return `<viewer-context mode="${attr(this.mode.name)}">${label}</viewer-context>`;
  }

  clearSelection() {
    this.selection = null;
    // Let the viewer drop its own highlight too (optional in the contract).
    try {
      if (this.instance && typeof this.instance.clearSelection === 'function') this.instance.clearSelection();
    } catch (error) {
      console.error('pneuma: clearSelection failed', error);
    }
  }

  destroy() {
    this.stopLocale();
    this.stopEditKeys();
    this.localeListeners.clear();
    try {
      this.instance && this.instance.destroy && this.instance.destroy();
    } catch (error) {
      console.error(error);
    }
    this.instance = null;
  }
}
