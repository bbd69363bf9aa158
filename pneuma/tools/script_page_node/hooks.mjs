// Module hooks for run.mjs: an import of "/prefix/path" is the file under
// the folder the exporter named for that prefix (nothing outside it), and
// every .js file is an ES module, as the browser treats the viewer's files.
import { pathToFileURL } from 'node:url';
import { resolve as resolvePath, sep } from 'node:path';

let folders = {};

export function initialize(data) {
  folders = data;
}

export async function resolve(specifier, context, nextResolve) {
  for (const [prefix, folder] of Object.entries(folders)) {
    if (!specifier.startsWith(prefix)) continue;
    const root = resolvePath(folder);
    const file = resolvePath(root, decodeURIComponent(specifier.slice(prefix.length)));
    if (!file.startsWith(root + sep)) throw new Error(`${specifier} is outside ${prefix}`);
    return { url: pathToFileURL(file).href, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  return nextLoad(url, url.endsWith('.js') ? { ...context, format: 'module' } : context);
}
