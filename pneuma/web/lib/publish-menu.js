// The Export menu's "Publish" entries (docs/sharing.md, "Publish"): one per
// target in the person's own publish.toml (GET /api/publish), each putting
// the served workspace's site there (POST /api/publish/<target>). The page
// names a target only; where it points is read on the server. A mode that
// names no site to publish publishes the shared file of the conversation
// shown (docs/sharing.md, "Share as one file") as index.html.

import { html, useState, useEffect } from '../vendor/preact-htm.js';
import { fetchJson } from './viewer-helpers.js';
import { t, localized } from './i18n.js';

const WEB_URL = /^https?:\/\//i;

function doneNote(target, answer) {
  const text = !answer.changed ? t('publish.unchanged', { target })
    : answer.commit ? t('publish.doneCommit', { target, commit: answer.commit.slice(0, 12) })
      : t('publish.done', { target });
  return { tone: (answer.warnings || []).length ? 'warn' : 'ok', text,
    url: answer.url || null, lines: answer.warnings || [] };
}

// `busy` and `setBusy` are the Export menu's: one export or publish at a time.
export function PublishEntries({ busy, setBusy }) {
  const [listing, setListing] = useState(null);
  const [note, setNote] = useState(null); // {tone, text, url?, lines?}
  useEffect(() => {
    fetchJson('/api/publish').then(setListing)
      .catch((error) => console.error('pneuma: listing the publish targets failed', error));
  }, []);
  if (!listing) return null;
  const what = listing.site ? 'site' : 'share';
  const run = async (target) => {
    setBusy(`publish:${target.name}`);
    setNote({ tone: 'busy', text: t('publish.running', { target: target.name }) });
    try {
      const answer = await fetchJson(`/api/publish/${encodeURIComponent(target.name)}`, { method: 'POST', json: { what } });
      setNote(doneNote(target.name, answer));
    } catch (error) {
      setNote({ tone: 'bad', text: t('publish.failed', { message: error.message || String(error) }),
        lines: error.hint ? [error.hint] : [] });
    } finally {
      setBusy(null);
    }
  };
  const targets = listing.targets || [];
  return html`<div class="publish-entries" role="group" aria-label=${t('publish.heading')}>
    <div class="publish-heading">${t('publish.heading')}</div>
    ${targets.map((target) => html`<button role="menuitem" class="menu-item" data-publish=${target.name}
        title=${t(what === 'site' ? 'publish.itemTitle' : 'publish.shareTitle',
          { target: target.name, kind: localized(target.label) || target.kind })}
        disabled=${busy != null} onClick=${() => run(target)}>
      <span>${target.name}</span><span class="muted">${localized(target.label) || target.kind}</span></button>`)}
    ${!targets.length && html`<div class="publish-note">${listing.problem
      ? t('publish.problem', { message: listing.problem.message }) : t('publish.none')}</div>`}
    ${note && html`<div class=${`publish-note ${note.tone}`} role="status">${note.text}
      ${note.url && html` ${t('publish.seeAt')} ${WEB_URL.test(note.url)
        ? html`<a href=${note.url} target="_blank" rel="noopener noreferrer">${note.url}</a>` : note.url}`}
      ${note.lines && note.lines.length > 0 && html`<ul class="export-left-out">${note.lines.map((line) => html`<li>${line}</li>`)}</ul>`}
    </div>`}
  </div>`;
}
