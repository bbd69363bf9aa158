// The shell's Export menu: the formats the served mode's exporter offers
// (GET /api/export, from the `register_exporters` hook), each a download
// (GET /api/export/<format>; the file is also kept under the workspace's
// exports/). "Share as file" (GET /api/share/file, pneuma/share/routes.py)
// is the host's own entry, there for every mode (docs/sharing.md). While an
// export runs, the note shows how far it is (GET /api/export/<format>/progress?id=…:
// 120/240 frames, as the exporter reports it; the id is this export's own, so
// that another tab exporting the same format is not shown here).

import { html, useState, useEffect, useRef } from '../vendor/preact-htm.js';
import { fetchJson } from './viewer-helpers.js';
import { t, localized } from './i18n.js';
import { useDismiss } from './dismiss.js';
import { PublishEntries } from './publish-menu.js';

// The host's entries, after the mode's formats.
const SHARE_FILE = { name: 'share-file', url: '/api/share/file', host: true };

async function download(format, address = `/api/export/${encodeURIComponent(format)}`) {
  const response = await fetch(address, { credentials: 'same-origin' });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const body = await response.json();
      message = (body.error && body.error.message) || message;
    } catch { /* not JSON: the status says it */ }
    throw new Error(message);
  }
  const blob = await response.blob();
  const disposition = response.headers.get('Content-Disposition') || '';
  const utf8 = disposition.match(/filename\*=UTF-8''([^;]+)/);
  const plain = disposition.match(/filename="?([^";]+)"?/);
  const name = utf8 ? decodeURIComponent(utf8[1]) : (plain ? plain[1] : format);
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
  return { name, saved: response.headers.get('X-Pneuma-Export-Path') || name,
    leftOut: leftOutOf(response.headers.get('X-Pneuma-Export-Left-Out')) };
}

const PROGRESS_EVERY_MS = 500;

// Ask how far the export is until `running()` says it ended; `show(state)` each answer.
function followProgress(format, id, running, show) {
  const address = `/api/export/${encodeURIComponent(format)}/progress?id=${encodeURIComponent(id)}`;
  const tick = async () => {
    if (!running()) return;
    try {
      const state = await fetchJson(address);
      if (running() && state.running && state.total > 0) show(state);
    } catch { /* the next tick asks again; the export's own answer says how it ended */ }
    if (running()) setTimeout(tick, PROGRESS_EVERY_MS);
  };
  setTimeout(tick, PROGRESS_EVERY_MS);
}

// The slides, pages or diagrams the export left out while it wrote the rest
// (one line each, naming it and why): percent-encoded JSON.
function leftOutOf(header) {
  if (!header) return [];
  try {
    const lines = JSON.parse(decodeURIComponent(header));
    return Array.isArray(lines) ? lines.map(String) : [];
  } catch {
    return [];
  }
}

export function ExportMenu() {
  const [formats, setFormats] = useState([]);
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(null);
  const [note, setNote] = useState(null); // {tone, text}
  const ref = useRef(null);
  useEffect(() => {
    fetchJson('/api/export').then((body) => setFormats(body.formats || []))
      .catch((error) => console.error('pneuma: listing the export formats failed', error));
  }, []);
  useDismiss(ref, open, () => setOpen(false));
  const run = async (format) => {
    setBusy(format.name);
    const label = localized(format.label) || format.name;
    setNote({ tone: 'busy', text: format.host ? t('shareFile.running') : t('export.running', { format: label }) });
    let running = true;
    let address = format.url;
    if (!format.host && !format.url) {
      const id = Math.random().toString(36).slice(2, 12);
      address = `/api/export/${encodeURIComponent(format.name)}?progress=${id}`;
      followProgress(format.name, id, () => running, ({ done, total }) => setNote({ tone: 'busy',
        text: t('export.progress', { format: label, done, total }) }));
    }
    try {
      const { saved, leftOut } = await download(format.name, address);
      setNote(leftOut.length
        ? { tone: 'warn', text: t('export.partial', { path: saved }), lines: leftOut }
        : { tone: 'ok', text: t(format.host ? 'shareFile.done' : 'export.done', { path: saved }) });
    } catch (error) {
      const message = error.message || String(error);
      setNote({ tone: 'bad', text: t(format.host ? 'shareFile.failed' : 'export.failed', { message }) });
    } finally {
      running = false;
      setBusy(null);
    }
  };
  return html`<div class="menu export-menu" ref=${ref}>
    <button class="export-btn" onClick=${() => { setOpen(!open); if (!open && !busy) setNote(null); }}
      title=${t('export.title')} aria-haspopup="menu" aria-expanded=${open} disabled=${busy != null && !open}>
      ${busy ? t('export.busy') : t('export.label')}
    </button>
    ${open && html`<div class="menu-pop" role="menu">
      ${formats.map((f) => html`<button role="menuitem" class="menu-item" data-format=${f.name}
          disabled=${busy != null} onClick=${() => run(f)}>
        <span>${localized(f.label) || f.name}</span><span class="muted">${f.suffix || t('export.folder')}</span></button>`)}
      <button role="menuitem" class="menu-item" data-entry=${SHARE_FILE.name} title=${t('shareFile.title')}
          disabled=${busy != null} onClick=${() => run(SHARE_FILE)}>
        <span>${t('shareFile.menu')}</span><span class="muted">${t('shareFile.suffix')}</span></button>
      <${PublishEntries} busy=${busy} setBusy=${setBusy} />
      ${note && html`<div class=${`export-note ${note.tone}`} role="status">${note.text}
        ${note.lines && html`<ul class="export-left-out">${note.lines.map((line) => html`<li>${line}</li>`)}</ul>`}
      </div>`}
    </div>`}
  </div>`;
}
