// Bundle Excalidraw + React for the draw viewer and place its fonts beside it.
//
//   npm ci && npm run build
//
// Writes ../pneuma_draw/static/vendor/ (gitignored):
//   excalidraw.js, excalidraw.css   the entry (src/entry.js) and its stylesheet
//   chunks/                          lazily loaded parts (locales, font subsetting worker, …)
//   fonts/                           Excalidraw's fonts, found through window.EXCALIDRAW_ASSET_PATH
//   licenses/, VERSIONS.json         what was bundled, at which versions
// The folder is built aside and swapped in whole, so a failed build leaves the
// previous one in place.
import { build } from "esbuild";
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(here, "../pneuma_draw/static/vendor");
const tmp = `${out}.tmp`;
const nm = join(here, "node_modules");
const excalidrawDist = join(nm, "@excalidraw/excalidraw/dist/prod");
const started = Date.now();

rmSync(tmp, { recursive: true, force: true });
mkdirSync(tmp, { recursive: true });

await build({
  entryPoints: { excalidraw: join(here, "src/entry.js") },
  outdir: tmp,
  bundle: true,
  format: "esm",
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  minify: true,
  target: ["es2020", "chrome90", "firefox90", "safari15"],
  conditions: ["production"],
  define: { "process.env.NODE_ENV": '"production"', "process.env.IS_PREACT": '"false"' },
  legalComments: "none",
  logLevel: "warning",
  loader: { ".woff2": "file", ".png": "file", ".svg": "file" },
  assetNames: "assets/[name]-[hash]",
});

// Fonts: Excalidraw resolves "./fonts/<Family>/<file>.woff2" against
// window.EXCALIDRAW_ASSET_PATH (the viewer points it at this folder); without
// them it would fall back to a CDN.
cpSync(join(excalidrawDist, "fonts"), join(tmp, "fonts"), { recursive: true });

const bundled = ["@excalidraw/excalidraw", "react", "react-dom", "scheduler"];
const versions = {};
mkdirSync(join(tmp, "licenses"), { recursive: true });
for (const name of bundled) {
  const dir = join(nm, name);
  versions[name] = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version;
  const license = readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
  if (license) cpSync(join(dir, license), join(tmp, "licenses", `${name.replace("/", "__")}.txt`));
}
writeFileSync(join(tmp, "VERSIONS.json"), JSON.stringify({ builtAt: new Date().toISOString(), versions }, null, 2) + "\n");

const size = (p) => (statSync(p).isDirectory() ? readdirSync(p).reduce((n, f) => n + size(join(p, f)), 0) : statSync(p).size);
rmSync(out, { recursive: true, force: true });
renameSync(tmp, out);
const mb = (n) => `${(n / 1048576).toFixed(1)} MB`;
console.log(
  `[draw/web] vendor ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ` +
    `excalidraw.js ${mb(size(join(out, "excalidraw.js")))}, chunks ${mb(size(join(out, "chunks")))}, ` +
    `fonts ${mb(size(join(out, "fonts")))}` + (existsSync(join(out, "assets")) ? `, assets ${mb(size(join(out, "assets")))}` : ""),
);
