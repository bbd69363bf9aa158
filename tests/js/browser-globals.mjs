// What the browser modules under test expect of a page, for `node --test`:
// animation frames, a visible document, localStorage, navigator, and a fetch
// that serves the shell's own i18n catalogues from pneuma/web/i18n/.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const webDir = fileURLToPath(new URL('../../pneuma/web/', import.meta.url));
const stored = new Map();

globalThis.document ??= { hidden: false, documentElement: {} };
globalThis.requestAnimationFrame ??= (callback) => setTimeout(callback, 0);
globalThis.localStorage ??= {
  getItem: (key) => (stored.has(key) ? stored.get(key) : null),
  setItem: (key, value) => stored.set(key, String(value)),
  removeItem: (key) => stored.delete(key),
};
if (!globalThis.navigator || !globalThis.navigator.languages) {
  Object.defineProperty(globalThis, 'navigator', {
    value: { language: 'en-US', languages: ['en-US'] }, configurable: true,
  });
}
globalThis.fetch = async (url) => {
  const path = String(url).replace(/^\/static\//, '');
  try {
    const text = await readFile(webDir + path, 'utf8');
    return { ok: true, status: 200, json: async () => JSON.parse(text), text: async () => text };
  } catch {
    return { ok: false, status: 404, json: async () => ({}), text: async () => '' };
  }
};

/** Wait for the store's coalesced notification (one animation frame). */
export const nextFrame = () => new Promise((resolve) => setTimeout(resolve, 5));
