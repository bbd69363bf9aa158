// The diagram mode's third-party code, bundled by `npm run build` twice:
// pneuma_diagram/static/vendor/mermaid.mjs (an ES module the viewer imports)
// and mermaid.iife.js (a classic script, global `PneumaMermaid`, inlined into
// the page headless Chromium renders for render_diagram and export).
import mermaid from "mermaid";

export { mermaid };
