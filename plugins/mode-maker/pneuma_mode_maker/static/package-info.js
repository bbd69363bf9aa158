// What the workspace's mode package is, read from the shell's file snapshot
// (pure functions, no DOM): which Python package pyproject.toml's entry
// point names, the manifest's summary, the viewer's modules and the seed
// files Play mounts it on (docs/mode-maker.md).

/** The entry point `[project.entry-points.pneuma]` declares: {mode, package} or null. */
export function entryPoint(pyproject) {
  const text = String(pyproject || "");
  const start = text.search(/^\[project\.entry-points\.pneuma\][ \t]*$/m);
  if (start < 0) return null;
  for (const line of text.slice(start).split("\n").slice(1)) {
    if (/^\s*\[/.test(line)) break;
    const m = /^\s*"?([\w.-]+)"?\s*=\s*"([\w.]+)(?::[\w.]+)?"/.exec(line);
    if (m) return { mode: m[1], package: m[2].split(".")[0] };
  }
  return null;
}

function localeKeys(value, into) {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    for (const key of Object.keys(value)) if (/^[a-z]{2}(-[A-Za-z]{2,4})?$/.test(key)) into.add(key);
  }
}

/** The manifest's summary: name, actions, tools, the locales its texts carry. */
export function manifestSummary(manifest) {
  const locales = new Set();
  localeKeys(manifest.displayName, locales);
  localeKeys(manifest.description, locales);
  const actions = (manifest.viewerApi?.actions || []).map((a) => {
    localeKeys(a.label, locales);
    return String(a.id);
  });
  return {
    name: String(manifest.name ?? ""),
    version: String(manifest.version ?? ""),
    actions,
    tools: (manifest.tools || []).map((tool) => String(tool.name)),
    locales: [...locales].sort(),
    module: String(manifest.viewer?.module || "viewer.js"),
    staticDir: String(manifest.viewer?.staticDir || "static").replace(/\/+$/, ""),
  };
}

/** The package as the files show it: {entry, manifest, summary, error}. */
export function readPackage(files) {
  const byPath = new Map((files || []).map((f) => [f.path, f]));
  const entry = entryPoint(byPath.get("pyproject.toml")?.content);
  if (!entry) return { entry: null, manifest: null, summary: null, error: "pyproject.toml declares no [project.entry-points.pneuma]" };
  const file = byPath.get(`${entry.package}/manifest.json`);
  if (!file || typeof file.content !== "string") {
    return { entry, manifest: null, summary: null, error: `${entry.package}/manifest.json is missing` };
  }
  try {
    const manifest = JSON.parse(file.content);
    return { entry, manifest, summary: manifestSummary(manifest), error: null };
  } catch (error) {
    return { entry, manifest: null, summary: null, error: String(error.message || error) };
  }
}

/** The viewer's static files as text, keyed by their path inside the static folder. */
export function viewerModules(files, pkg) {
  const prefix = `${pkg.entry.package}/${pkg.summary.staticDir}/`;
  const modules = {};
  for (const file of files || []) {
    if (file.path.startsWith(prefix) && typeof file.content === "string" && !file.binary) {
      modules[file.path.slice(prefix.length)] = file.content;
    }
  }
  return modules;
}

/** The static folder's files the snapshot carries without text (pictures,
 * fonts, a bundle too large for it): [{path, key}], fetched for Play. */
export function viewerAssets(files, pkg) {
  const prefix = `${pkg.entry.package}/${pkg.summary.staticDir}/`;
  return (files || []).filter((f) => f.path.startsWith(prefix) && typeof f.content !== "string")
    .map((f) => ({ path: f.path, key: f.path.slice(prefix.length) }));
}

/** Absolute `/static/…` modules the package's code imports from the shell. */
export function sharedImports(sources) {
  const found = new Set();
  const pattern = /(?:\bfrom\s*|\bimport\s*\(?\s*)(["'])(\/static\/[^"'\n]+\.m?js)\1/g;
  for (const source of sources) {
    for (const m of String(source).matchAll(pattern)) found.add(m[2]);
  }
  return [...found].sort();
}

/** The seed files Play mounts the viewer on: [{source, path}] from init.seedFiles. */
export function seedSamples(files, pkg) {
  const seeds = pkg.manifest?.init?.seedFiles || {};
  const base = `${pkg.entry.package}/`;
  const samples = [];
  for (const [source, dest] of Object.entries(seeds)) {
    const into = String(dest).replace(/^\.\/?/, "").replace(/\/+$/, "");
    const join = (rel) => (into ? `${into}/${rel}` : rel);
    if (source.endsWith("/")) {
      const folder = base + source;
      for (const file of files || []) {
        if (file.path.startsWith(folder)) samples.push({ source: file, path: join(file.path.slice(folder.length)) });
      }
    } else {
      const file = (files || []).find((f) => f.path === base + source);
      if (file) samples.push({ source: file, path: into || source.split("/").pop() });
    }
  }
  return samples;
}

/** Whether a change to `path` changes what Play shows. */
export function affectsPlay(path, pkg) {
  if (path === "pyproject.toml") return true;
  if (!pkg?.entry) return false;
  return path.startsWith(`${pkg.entry.package}/`) && !/\.py$/.test(path);
}
