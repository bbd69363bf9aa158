// The doc export's Markdown: every document rendered by the viewer's own
// renderer (markdown.js, createRenderer: the same markdown-it, plugins,
// linkify and highlight.js), told through markdown-it's env where links and
// headings point in one standalone page of all the documents.
//
// pneuma_doc/exporter.py runs this module through pneuma.api.run_script /
// run_script_then_pdf (in Node.js, or in a page of its own in headless
// Chromium: nothing here may need a DOM) and reads back what
// renderDocuments returns. The imports are static so that the whole module
// graph is in before the page's load event, which is when Chromium's
// --dump-dom reads the page.

import { MarkdownIt } from "/static/lib/markdown-it.js";
import { hljs } from "./vendor/doc-vendor.js";
import { createRenderer, findHeading, githubSlug } from "./markdown.js";

/** An image's src until the exporter puts the file in as a data: URL. */
export const IMAGE_PLACEHOLDER = "pneuma-export-image:";

// Each document is one <article> of the page; its id is made of its path
// ("guide/setup.md" -> "doc-guide-setup"), and each heading's id is the
// document's id, "--" and the heading's GitHub slug. A document's id has no
// "--" of its own, so no id repeats across documents.
function documentAnchors(paths) {
  const seen = new Set();
  return paths.map((path) => {
    const words = path.replace(/\.md$/i, "").replace(/[/._]+/g, " ").trim();
    const base = "doc-" + (githubSlug(words).replace(/-+/g, "-").replace(/^-|-$/g, "") || "document");
    let anchor = base;
    for (let n = 2; seen.has(anchor); n++) anchor = `${base}-${n}`;
    seen.add(anchor);
    return anchor;
  });
}

function titleOf(path, headings) {
  const first = headings.find((h) => h.level === 1);
  return first ? first.text : path.split("/").pop().replace(/\.md$/i, "");
}

/**
 * Every document as the viewer renders it, made into parts of one page.
 * `job`: {documents: [{path, text}], rawHtml}. The answer, in order:
 * [{path, anchor, title, html, headings: [{level, text, slug, id}]}].
 */
export function renderDocuments(job) {
  const md = createRenderer({ MarkdownIt, hljs }, { html: Boolean(job.rawHtml) });
  const anchors = documentAnchors(job.documents.map((d) => d.path));
  // First every document's headings (parsing sets env.headings), so that a
  // link can name a heading of a document rendered after it.
  const docs = job.documents.map((d, i) => {
    const env = { file: d.path };
    md.parse(d.text, env);
    return { path: d.path, text: d.text, anchor: anchors[i], headings: env.headings || [] };
  });
  const byPath = new Map(docs.map((d) => [d.path, d]));
  // A link to a document, or to one of its headings, becomes a link inside
  // the page; a link to a file that is not a document keeps its address.
  const pageHref = ({ path, fragment }) => {
    const target = byPath.get(path);
    if (!target) return null;
    const heading = fragment ? findHeading(target.headings, fragment) : null;
    return heading ? `#${target.anchor}--${heading.slug}` : `#${target.anchor}`;
  };
  return docs.map((doc) => {
    const env = {
      file: doc.path,
      contentUrl: (p) => IMAGE_PLACEHOLDER + encodeURIComponent(p),
      headingId: (slug) => `${doc.anchor}--${slug}`,
      pageHref,
      eagerImages: true,
    };
    return {
      path: doc.path,
      anchor: doc.anchor,
      title: titleOf(doc.path, doc.headings),
      html: md.render(doc.text, env),
      headings: doc.headings.map((h) => ({ ...h, id: `${doc.anchor}--${h.slug}` })),
    };
  });
}
