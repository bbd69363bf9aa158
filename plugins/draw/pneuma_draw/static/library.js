// Loading Excalidraw: its bundle and stylesheet from ./vendor/ (built at
// setup by scripts/build-web) and the viewer's own styles, once per page.

const VENDOR = new URL("./vendor/", import.meta.url);

let libraryPromise = null;

export function loadLibrary() {
  if (!libraryPromise) {
    // Must be set before Excalidraw registers its fonts.
    window.EXCALIDRAW_ASSET_PATH = VENDOR.href;
    addStylesheet("pneuma-draw-excalidraw-css", new URL("excalidraw.css", VENDOR).href);
    addStyle("pneuma-draw-style", VIEWER_CSS);
    libraryPromise = import(new URL("excalidraw.js", VENDOR).href).catch((err) => {
      libraryPromise = null;
      const missing = new Error(
        "The Excalidraw bundle is missing or broken. Run scripts/build-web " +
          "(or `npm ci && npm run build` in plugins/draw/web) and reload. " +
          `(${err && err.message ? err.message : err})`,
      );
      missing.cause = err;
      missing.detail = err && err.message ? err.message : String(err);
      throw missing;
    });
  }
  return libraryPromise;
}

function addStylesheet(id, href) {
  if (document.getElementById(id)) return;
  const link = document.createElement("link");
  link.id = id;
  link.rel = "stylesheet";
  link.href = href;
  document.head.appendChild(link);
}

function addStyle(id, css) {
  if (document.getElementById(id)) return;
  const style = document.createElement("style");
  style.id = id;
  style.textContent = css;
  document.head.appendChild(style);
}

const VIEWER_CSS = `
.pneuma-draw { position: relative; width: 100%; height: 100%; min-height: 320px; overflow: hidden; container-type: inline-size; }
.pneuma-draw-canvas { position: absolute; inset: 0; }
.pneuma-draw-canvas .excalidraw { --pneuma-draw-accent: var(--color-primary, #6965db);
  /* Excalidraw's labels in Chinese (its langCode follows the page): after its
     own Latin face, the shell's fonts, which end with a CJK face (styles.css). */
  --ui-font: Assistant, var(--sans, system-ui, sans-serif); }
.pneuma-draw-files { display: flex; align-items: center; gap: 4px; pointer-events: all;
  font: 13px/1.2 var(--ui-font, system-ui, sans-serif); }
.pneuma-draw-files select, .pneuma-draw-files .pneuma-draw-name {
  height: 2.25rem; max-width: 16rem; padding: 0 .6rem; border-radius: .5rem;
  border: 1px solid var(--default-border-color, var(--border, #e0dfff)); box-shadow: var(--shadow-island, none);
  background: var(--island-bg-color, var(--panel, #fff)); color: var(--text-primary-color, var(--text, #1b1b1f));
  font: inherit; display: flex; align-items: center; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.pneuma-draw-files select { cursor: pointer; }
.pneuma-draw-files button { height: 2.25rem; width: 2.25rem; border-radius: .5rem; cursor: pointer;
  border: 1px solid var(--default-border-color, var(--border, #e0dfff)); box-shadow: var(--shadow-island, none);
  background: var(--island-bg-color, var(--panel, #fff)); color: var(--text-primary-color, var(--text, #1b1b1f)); font-size: 18px; line-height: 1; }
.pneuma-draw-files button:hover, .pneuma-draw-files select:hover { background: var(--button-hover-bg, var(--accent-soft, #f1f0ff)); }
.pneuma-draw-mobile-slot { position: absolute; left: 50%; bottom: 20px; transform: translateX(-50%); z-index: 6; }
.pneuma-draw-mobile-slot:empty { display: none; }
.pneuma-draw-files-compact select, .pneuma-draw-files-compact .pneuma-draw-name { max-width: 8rem; padding: 0 .35rem; }
@container (max-width: 900px) { .pneuma-draw-files select, .pneuma-draw-files .pneuma-draw-name { max-width: 11rem; } }
.pneuma-draw-notice { position: absolute; left: 50%; bottom: 4.5rem; transform: translateX(-50%); z-index: 10;
  max-width: min(36rem, 90%); padding: .5rem .85rem; border-radius: var(--radius, .5rem);
  background: var(--panel, #fff); color: var(--text, #1e1e1e); border: 1px solid var(--warn, #f08c00);
  font: 13px/1.4 var(--sans, system-ui, sans-serif); box-shadow: 0 2px 10px rgba(0,0,0,.12); }
.pneuma-draw-notice[hidden] { display: none; }
.pneuma-draw-empty { position: absolute; inset: 0; display: flex; flex-direction: column; align-items: center;
  justify-content: center; gap: .75rem; text-align: center; padding: 2rem; z-index: 5;
  font: 15px/1.5 var(--sans, system-ui, sans-serif); color: var(--muted, #495057); background: var(--bg, #fff); }
.pneuma-draw-empty[hidden] { display: none; }
.pneuma-draw-pins { position: absolute; inset: 0; pointer-events: none; overflow: hidden; z-index: 3; }
.pneuma-draw-pin { position: absolute; pointer-events: auto; transform: translate(-50%, -50%); min-width: 22px; height: 22px;
  padding: 0 5px; border-radius: 11px; border: 2px solid #fff; background: var(--accent, #6965db); color: #fff;
  font: 600 12px/18px var(--sans, system-ui, sans-serif); cursor: pointer; box-shadow: 0 1px 4px rgba(0,0,0,.3); }
.pneuma-draw-pin-addressed { background: var(--ok, #2f9e44); text-decoration: line-through; }
.pneuma-draw-empty h2 { margin: 0; font-size: 1.15rem; color: var(--text, #1e1e1e); }
.pneuma-draw-empty p { margin: 0; max-width: 28rem; }
.pneuma-draw-empty button { padding: .5rem 1rem; border-radius: var(--radius, .5rem); border: 1px solid var(--accent, #6965db);
  background: var(--accent, #6965db); color: #fff; font: inherit; cursor: pointer; }
`;
