// The dashboard mode's third-party code, bundled by `npm run build` into one
// classic script, pneuma_dashboard/static/vendor/vega.iife.js (global
// `PneumaVega`). The viewer adds it with a <script> element; headless
// Chromium (exports, checks) loads the same file from its file: URL, where
// an ES module would be refused (module scripts need CORS, which file: URLs
// do not have). vega-interpreter evaluates Vega expressions without
// `new Function`, which the shell's script-src policy forbids
// (docs/viewer-contract.md, "Workspace content and the page's security policy").
import * as vega from "vega";
import * as vegaLite from "vega-lite";
import vegaEmbed from "vega-embed";
import { expressionInterpreter } from "vega-interpreter";

export { vega, vegaLite, vegaEmbed, expressionInterpreter };
