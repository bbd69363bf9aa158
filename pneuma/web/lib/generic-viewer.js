// The viewer for a mode without viewer.module: the watched files in a list
// and the selected one as text (or an image). It follows the same contract
// as any mode's viewer (docs/viewer-contract.md) and answers the actions it
// cannot carry out with {success: false, message: "… not supported"}.

import { highlight, languageOf } from './markdown.js';

const IMAGE = /\.(png|jpe?g|gif|webp|svg|avif|bmp|ico)$/i;

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'class') node.className = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (value !== undefined && value !== null) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child == null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function attr(value) {
  return String(value).replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
}

let modeName = 'generic';

export const genericViewer = {
  mount(element, ctx) {
    modeName = (ctx.mode && ctx.mode.name) || modeName;
    let current = null;
    const list = el('nav', { class: 'gv-list', 'aria-label': 'Files' });
    const title = el('div', { class: 'gv-title' });
    const body = el('div', { class: 'gv-body' });
    const root = el('div', { class: 'generic-viewer' }, list, el('section', { class: 'gv-main' }, title, body));
    element.append(root);

    function show(path) {
      current = path;
      ctx.setActiveFile(path);
      render();
    }

    function render() {
      const files = ctx.files;
      if (current && !files.some((f) => f.path === current)) current = null;
      if (!current && files.length) current = ctx.items()[0]?.path || files[0].path;
      list.replaceChildren(
        ...(files.length ? files.map((f) => el('button', {
          class: `gv-file${f.path === current ? ' active' : ''}`,
          title: f.path,
          onclick: () => show(f.path),
        }, el('span', { class: 'gv-dir' }, f.path.includes('/') ? `${f.path.slice(0, f.path.lastIndexOf('/') + 1)}` : ''),
        el('span', { class: 'gv-name' }, f.path.split('/').pop())))
          : [el('p', { class: 'gv-empty' }, 'No files yet. They appear here as soon as they are written.')]),
      );
      const file = files.find((f) => f.path === current);
      title.replaceChildren(file ? el('span', {}, file.path) : '');
      if (!file) {
        body.replaceChildren(el('div', { class: 'gv-placeholder' }, files.length ? 'Pick a file.' : 'The workspace has no watched files yet.'));
        return;
      }
      if (IMAGE.test(file.path)) {
        body.replaceChildren(el('div', { class: 'gv-image' }, el('img', { src: ctx.contentUrl(file.path), alt: file.path })));
      } else if (file.binary || file.content == null) {
        body.replaceChildren(el('div', { class: 'gv-placeholder' }, 'A binary file: no preview.'));
      } else {
        const code = el('code', { class: 'hljs' });
        code.innerHTML = highlight(file.content, languageOf(file.path));
        body.replaceChildren(el('pre', { class: 'gv-text' }, code));
      }
    }

    function onMouseUp() {
      const selected = String(window.getSelection() || '').trim();
      if (selected && current) ctx.setSelection({ file: current, text: selected.slice(0, 2000) });
    }
    body.addEventListener('mouseup', onMouseUp);

    render();

    return {
      update() {
        render();
      },
      async runAction(actionId, params) {
        if (actionId === 'navigate-to' && params && typeof params.file === 'string') {
          if (!ctx.files.some((f) => f.path === params.file)) {
            return { success: false, message: `no watched file ${params.file}` };
          }
          show(params.file);
          return { success: true, message: `showing ${params.file}` };
        }
        if (actionId === 'describe-view') {
          return {
            success: true,
            message: current ? `The file list and ${current} as text` : 'The file list (no file open)',
            data: { viewer: 'generic', file: current, files: ctx.files.map((f) => f.path) },
          };
        }
        return { success: false, message: `'${actionId}' is not supported by the generic file viewer (this mode has no viewer module)` };
      },
      destroy() {
        body.removeEventListener('mouseup', onMouseUp);
        root.remove();
      },
    };
  },

  extractContext(selection) {
    if (!selection) return '';
    const text = String(selection.text || '').replace(/\s+/g, ' ').trim();
    const short = text.length > 400 ? `${text.slice(0, 400)}…` : text;
    return `<viewer-context mode="${attr(modeName)}" file="${attr(selection.file || '')}">selected text: "${short}"</viewer-context>`;
  },
};
