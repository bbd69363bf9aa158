// Place the prebuilt WebGAL engine where the webgal mode serves it.
//
//   npm ci && npm run build
//
// Copies node_modules/webgal-engine/dist/ (index.html, assets/, the service
// worker; the .gz twins are kept because the server hands them to browsers
// that accept gzip) to ../pneuma_webgal/static/engine/ (gitignored), plus the
// engine's licence and a VERSIONS.json saying what was copied. Nothing of the
// engine is modified: the server injects its launcher script into index.html
// when it serves the page. The folder is built aside and swapped in whole, so
// a failed build leaves the previous one in place.
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkgDir = join(here, "node_modules", "webgal-engine");
const dist = join(pkgDir, "dist");
const out = resolve(here, "../pneuma_webgal/static/engine");
const tmp = `${out}.tmp`;

if (!existsSync(join(dist, "index.html"))) {
  console.error(`[webgal] ${dist}/index.html is missing: run \`npm ci\` in ${here} first`);
  process.exit(1);
}
const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
const html = readFileSync(join(dist, "index.html"), "utf8");
if (!/<script type="module"[^>]*src="\.\/assets\/index-[^"]+\.js"/.test(html)) {
  console.error("[webgal] the engine's index.html does not load ./assets/index-*.js as expected");
  process.exit(1);
}

rmSync(tmp, { recursive: true, force: true });
mkdirSync(tmp, { recursive: true });
cpSync(dist, tmp, { recursive: true });
if (existsSync(join(pkgDir, "LICENSE"))) cpSync(join(pkgDir, "LICENSE"), join(tmp, "LICENSE.txt"));
writeFileSync(
  join(tmp, "VERSIONS.json"),
  JSON.stringify({ builtAt: new Date().toISOString(), versions: { "webgal-engine": pkg.version } }, null, 2) + "\n",
);
rmSync(out, { recursive: true, force: true });
renameSync(tmp, out);
console.log(`[webgal] engine ${pkg.version} copied to ${out}`);
