// Place the CJK font the webgal viewer falls back to where the mode serves it.
//
//   npm ci && node fonts.mjs     (run by `npm run build`, hence scripts/build-web)
//
// The viewer's script editor, scene list and status line show Chinese scenes;
// on a machine without CJK system fonts the browser would draw empty boxes.
// @fontsource/noto-sans-sc (OFL-1.1) ships Noto Sans SC cut into ~100
// unicode-range slices, so the browser fetches only the slices of characters
// actually on screen. We take the regular weight only (the browser emboldens
// it for the few bold labels) and only its woff2 files (every browser that
// runs the shell reads woff2), and rename the family to "Pneuma Noto Sans SC"
// so that a system-installed "Noto Sans SC" is never shadowed by ours: the
// viewer's stylesheet lists the system CJK fonts first and ours last.
//
// Output: ../pneuma_webgal/static/vendor/cjk-font/ (gitignored) with
// noto-sans-sc.css, files/*.woff2, LICENSE.txt and VERSIONS.json. Built aside
// and swapped in whole, so a failed run leaves the previous one in place.
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE = "@fontsource/noto-sans-sc";
const FAMILY = "Pneuma Noto Sans SC";
const here = dirname(fileURLToPath(import.meta.url));
const pkgDir = join(here, "node_modules", ...PACKAGE.split("/"));
const sourceCss = join(pkgDir, "400.css");
const out = resolve(here, "../pneuma_webgal/static/vendor/cjk-font");
const tmp = `${out}.tmp`;

if (!existsSync(sourceCss)) {
  console.error(`[webgal] ${sourceCss} is missing: run \`npm ci\` in ${here} first`);
  process.exit(1);
}
const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));

// Each @font-face of the package keeps its unicode-range; its src becomes the
// woff2 file alone, and its family our own name.
const faces = [];
for (const block of readFileSync(sourceCss, "utf8").matchAll(/@font-face\s*{([^}]*)}/g)) {
  const body = block[1];
  const woff2 = body.match(/url\(\.\/files\/([^)]+\.woff2)\)/);
  const range = body.match(/unicode-range:\s*([^;]+);/);
  if (!woff2 || !range) {
    console.error(`[webgal] unexpected @font-face in ${sourceCss}: ${body.trim().slice(0, 120)}`);
    process.exit(1);
  }
  faces.push({ file: woff2[1], range: range[1].trim() });
}
if (faces.length === 0) {
  console.error(`[webgal] no @font-face found in ${sourceCss}`);
  process.exit(1);
}

rmSync(tmp, { recursive: true, force: true });
mkdirSync(join(tmp, "files"), { recursive: true });
const css = [`/* ${PACKAGE} ${pkg.version} (${pkg.license}), regular weight, woff2 slices; written by plugins/webgal/web/fonts.mjs */`];
for (const face of faces) {
  cpSync(join(pkgDir, "files", face.file), join(tmp, "files", face.file));
  css.push(
    `@font-face{font-family:"${FAMILY}";font-style:normal;font-weight:400;font-display:swap;`
      + `src:url(./files/${face.file}) format("woff2");unicode-range:${face.range};}`,
  );
}
writeFileSync(join(tmp, "noto-sans-sc.css"), css.join("\n") + "\n");
cpSync(join(pkgDir, "LICENSE"), join(tmp, "LICENSE.txt"));
writeFileSync(
  join(tmp, "VERSIONS.json"),
  JSON.stringify({ builtAt: new Date().toISOString(), versions: { [PACKAGE]: pkg.version }, faces: faces.length }, null, 2) + "\n",
);
rmSync(out, { recursive: true, force: true });
mkdirSync(dirname(out), { recursive: true });
renameSync(tmp, out);
console.log(`[webgal] ${PACKAGE} ${pkg.version}: ${faces.length} slices copied to ${out}`);
