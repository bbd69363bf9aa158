// Markdown for the chat: markdown-it (raw HTML off, so the agent's text can
// never inject markup) with highlight.js for fenced code.

import { MarkdownIt } from './markdown-it.js';
import hljs from '../vendor/highlight.min.js';

const md = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: false,
  typographer: false,
  highlight(code, lang) {
    const language = lang && hljs.getLanguage(lang) ? lang : null;
    try {
      const out = language
        ? hljs.highlight(code, { language, ignoreIllegals: true }).value
        : escapeHtml(code);
      return `<pre class="code"><code class="hljs${language ? ` language-${language}` : ''}">${out}</code></pre>`;
    } catch {
      return '';
    }
  },
});

const defaultLink = md.renderer.rules.link_open || ((tokens, idx, options, env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx].attrSet('target', '_blank');
  tokens[idx].attrSet('rel', 'noopener noreferrer');
  return defaultLink(tokens, idx, options, env, self);
};

export function escapeHtml(text) {
  return String(text)
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');
}

const cache = new Map();
const CACHE_LIMIT = 400;

/** HTML for a Markdown text. Finished texts are cached, the least recently
 *  shown going first; a text still streaming is not: each of its prefixes
 *  is shown once, and keeping them would push the finished messages out. */
export function renderMarkdown(text, { streaming = false } = {}) {
  const source = String(text || '');
  const hit = cache.get(source);
  if (hit !== undefined) {
    cache.delete(source);
    cache.set(source, hit);
    return hit;
  }
  const html = md.render(source);
  if (streaming) return html;
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value);
  cache.set(source, html);
  return html;
}

export function highlight(code, language) {
  if (language && hljs.getLanguage(language)) {
    return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  }
  return escapeHtml(code);
}

export function languageOf(path) {
  const ext = String(path || '').split('.').pop().toLowerCase();
  const map = {
    js: 'javascript', mjs: 'javascript', ts: 'typescript', tsx: 'typescript', jsx: 'javascript',
    py: 'python', md: 'markdown', json: 'json', html: 'xml', htm: 'xml', xml: 'xml', svg: 'xml',
    css: 'css', sh: 'bash', bash: 'bash', yml: 'yaml', yaml: 'yaml', toml: 'ini', tex: 'latex',
    rs: 'rust', go: 'go', java: 'java', c: 'c', h: 'c', cpp: 'cpp', rb: 'ruby', sql: 'sql',
    excalidraw: 'json', txt: null,
  };
  return map[ext] || null;
}
