// The diagram mode's third-party code, bundled by `npm run build` into one
// classic script, pneuma_diagram/static/vendor/mermaid.iife.js (global
// `PneumaMermaid`). The viewer adds it with a <script> element; headless
// Chromium (render_diagram, validate_diagram, export) loads the same file
// from its file: URL, where an ES module would be refused (module scripts
// need CORS, which file: URLs do not have).
import mermaid from "mermaid";

export { mermaid };
