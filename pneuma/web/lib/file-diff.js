// A file's diff across one turn, from before it to what it left
// (GET /api/checkpoints/{ref}/diff?path=P): under "N files changed"
// (lib/rewind.js) and under a change of the turn (lib/turn-review.js).

import { html, useState, useEffect } from '../vendor/preact-htm.js';
import { fetchJson } from './viewer-helpers.js';
import { t } from './i18n.js';

// A unified diff, in the look of the write dry run's DiffView (app.js).
function UnifiedDiff({ text }) {
  if (!text) return html`<div class="diff-view"><div class="diff-line muted">${t('diff.noChange')}</div></div>`;
  const rows = [];
  let oldLine = 0;
  let newLine = 0;
  for (const line of text.replace(/\n$/, '').split('\n')) {
    if (line.startsWith('--- ') || line.startsWith('+++ ')) continue;
    const head = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (head) {
      oldLine = Number(head[1]);
      newLine = Number(head[2]);
      rows.push(html`<div class="diff-line diff-head">${line}</div>`);
      continue;
    }
    const mark = line[0];
    const body = line.slice(1);
    if (mark === '-') {
      rows.push(html`<div class="diff-line diff-del"><span class="diff-num">${oldLine++}</span><span class="diff-mark">−</span><span class="diff-text">${body}</span></div>`);
    } else if (mark === '+') {
      rows.push(html`<div class="diff-line diff-add"><span class="diff-num">${newLine++}</span><span class="diff-mark">+</span><span class="diff-text">${body}</span></div>`);
    } else {
      rows.push(html`<div class="diff-line diff-ctx"><span class="diff-num">${newLine}</span><span class="diff-mark"> </span><span class="diff-text">${body}</span></div>`);
      oldLine += 1;
      newLine += 1;
    }
  }
  return html`<div class="diff-view">${rows.slice(0, 2000)}</div>`;
}

export function FileDiff({ turn, path }) {
  const [state, setState] = useState({ loading: true });
  useEffect(() => {
    let live = true;
    fetchJson(`/api/checkpoints/${encodeURIComponent(turn.ref)}/diff?path=${encodeURIComponent(path)}`)
      .then((body) => live && setState({ text: body.diff }))
      .catch((error) => live && setState({ error: error.message }));
    return () => { live = false; };
  }, [turn.ref, path]);
  if (state.loading) return html`<div class="turn-diff muted"><span class="spinner" />${t('rewind.diffLoading')}</div>`;
  if (state.error) return html`<div class="turn-diff muted" role="alert">${t('rewind.diffFailed', { message: state.error })}</div>`;
  return html`<div class="turn-diff"><${UnifiedDiff} text=${state.text} /></div>`;
}
