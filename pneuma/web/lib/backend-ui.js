// The backend slot: a backend with browser UI of its own names an ES module
// (GET /api/config: backendModule, served by the backend's own routes); the
// shell imports it before the socket connects and shows what it returns.
// The shell names no backend: whatever a backend adds to the page comes
// through here (docs/architecture.md, "The browser").
//
// The module's `install(context)` gets the shell's store (with `extend` to
// follow socket messages, `subscribe` to re-render on any change), socket,
// actions, Preact helpers (html, useState, useEffect) and translator,
// and returns `{header: [Component], overlays: [Component]}`: components shown
// in the header's row and above the page.

const EMPTY = Object.freeze({ header: [], overlays: [] });

/** What a backend module's install() returned, with missing parts empty. */
export function normalizeBackendUi(installed) {
  const parts = installed && typeof installed === 'object' ? installed : {};
  const list = (value) => (Array.isArray(value) ? value.filter((c) => typeof c === 'function') : []);
  return { header: list(parts.header), overlays: list(parts.overlays) };
}

/** Import and install the backend's module; the empty UI when there is none
 *  or it fails (the page works without it, and the console says why). */
export async function loadBackendUi(url, context, importer = (u) => import(u)) {
  if (!url) return EMPTY;
  try {
    const module = await importer(url);
    if (typeof module.install !== 'function') throw new Error('it exports no install()');
    return normalizeBackendUi(module.install(context));
  } catch (error) {
    console.warn(`the backend's browser module ${url} did not load`, error);
    return EMPTY;
  }
}
