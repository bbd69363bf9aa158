// "Saving is paused": shown above the chat while the server cannot save
// (a full disk, a disk I/O error, a log another process holds), from
// session.saving {paused: [parts], reason}; gone when it resumes
// (docs/conversations.md, "When the log is damaged, locked or the disk is full").
import { html } from '../vendor/preact-htm.js';
import { t, getLocale } from './i18n.js';

const PART_KEYS = {
  conversation: 'saving.part.conversation',
  checkpoints: 'saving.part.checkpoints',
  session: 'saving.part.session',
};

export function SavingBanner({ saving }) {
  if (!saving || !Array.isArray(saving.paused) || !saving.paused.length) return null;
  const parts = saving.paused.map((part) => (PART_KEYS[part] ? t(PART_KEYS[part]) : part)).join(', ');
  // The reason is the server's English words; another language says it in its own.
  const reason = getLocale() === 'en' && saving.reason ? saving.reason : t('saving.reasonUnknown');
  return html`<div class="notice warn saving-paused" role="status" data-paused=${saving.paused.join(' ')}>
    <div class="notice-title">${t('saving.paused', { parts })}</div>
    <div class="notice-body">${t('saving.pausedBody', { reason })}</div>
  </div>`;
}
