// The English / 中文 control of the shell and the launcher, and the fetch of
// the Chinese glyphs a first screen needs.
//
// On a machine without a CJK system font Chinese is drawn with the shell's
// own font (styles.css, "Pneuma Noto Sans SC"), whose unicode-range slices
// are fetched on demand. Chromium can go on drawing empty boxes for text it
// laid out before the slice arrived (the "中文" of the switch on an English
// page, for one), so a page fetches its first screen's slices before it
// draws it (`glyphsFor`).

import { html } from '../vendor/preact-htm.js';
import { t, getLocale, setLocale, LOCALES, LOCALE_NAMES } from './i18n.js';

const CJK = /[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]/; // ideographs and CJK punctuation
const FONT_FAMILY = 'Pneuma Noto Sans SC';
const GLYPHS_WAIT_MS = 1500; // a slow slice must not hold the page back for long

/** Each language named in itself; the choice is kept (lib/i18n.js). */
export function LanguageSwitch() {
  const locale = getLocale();
  return html`<div class="lang-switch" role="group" aria-label=${t('lang.label')}>
    ${LOCALES.map((code) => html`<button key=${code} class=${`lang-btn${code === locale ? ' current' : ''}`}
      lang=${code} data-locale=${code} aria-pressed=${code === locale}
      onClick=${() => setLocale(code).catch((error) => console.error('pneuma: switching the language failed', error))}>${LOCALE_NAMES[code]}</button>`)}
  </div>`;
}

/** Fetch the shell font's slices for the CJK characters of `text` (and
 * of the language names), for at most GLYPHS_WAIT_MS. */
export async function glyphsFor(text = '') {
  // Only the Chinese characters: the font's Latin slices are never needed
  // (the system's fonts come first in the stack) and must not be fetched.
  const wanted = [...text + Object.values(LOCALE_NAMES).join('')].filter((c) => CJK.test(c)).join('');
  if (!document.fonts || !wanted) return;
  const deadline = Date.now() + GLYPHS_WAIT_MS;
  // A module script may run before the stylesheet that declares the font
  // (and its @import) has loaded: until the faces are declared there is
  // nothing to load, and `fonts.load` would answer at once with none.
  while (![...document.fonts].some((face) => face.family.includes(FONT_FAMILY)) && Date.now() < deadline) {
    await new Promise((resolve) => { setTimeout(resolve, 25); });
  }
  const loading = document.fonts.load(`16px "${FONT_FAMILY}"`, wanted).catch(() => null);
  await Promise.race([loading, new Promise((resolve) => { setTimeout(resolve, Math.max(0, deadline - Date.now())); })]);
}
