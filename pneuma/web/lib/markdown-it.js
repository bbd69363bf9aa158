// The one Markdown parser of the page: markdown-it as pinned in
// pneuma/web/package.json (copied to /static/vendor/ by scripts/build-web).
// The chat (lib/markdown.js) and every viewer that renders Markdown import it
// from here (`/static/lib/markdown-it.js`), each with its own options and
// plugins, so the page loads one copy in one version.

import '../vendor/markdown-it.min.js'; // UMD: defines globalThis.markdownit

/** markdown-it's constructor (`new MarkdownIt(options)`). */
export const MarkdownIt = globalThis.markdownit;
