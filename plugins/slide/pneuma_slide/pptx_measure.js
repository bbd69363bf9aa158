// Run in a rendered slide (Chromium, through Playwright) by the PPTX export
// (pptx_text.py): finds the text that maps to PowerPoint text boxes
// (headings, paragraphs, list items: blocks holding only inline text),
// measures each as drawn (getBoundingClientRect, getComputedStyle), then
// hides the glyphs it mapped so the slide's picture keeps everything else
// (backgrounds, borders, images, and any text that could not be mapped).
// Returns the boxes as JSON-ready objects, in CSS pixels of the slide.
(() => {
  const ATOMIC = new Set(['IMG', 'SVG', 'VIDEO', 'AUDIO', 'CANVAS', 'IFRAME', 'OBJECT', 'EMBED',
    'INPUT', 'BUTTON', 'SELECT', 'TEXTAREA', 'MATH', 'PICTURE', 'METER', 'PROGRESS']);
  const GENERIC = {
    'sans-serif': 'Arial', 'system-ui': 'Arial', 'ui-sans-serif': 'Arial', '-apple-system': 'Arial',
    'blinkmacsystemfont': 'Arial', 'serif': 'Times New Roman', 'ui-serif': 'Times New Roman',
    'monospace': 'Courier New', 'ui-monospace': 'Courier New', 'cursive': 'Comic Sans MS',
    'fantasy': 'Impact', 'math': 'Cambria Math', 'emoji': 'Segoe UI Emoji',
  };
  const BULLET_CHARS = { disc: '\u2022', circle: '\u25E6', square: '\u25AA' };
  const AUTO_NUMBERS = {
    decimal: 'arabicPeriod', 'decimal-leading-zero': 'arabicPeriod', 'lower-alpha': 'alphaLcPeriod',
    'lower-latin': 'alphaLcPeriod', 'upper-alpha': 'alphaUcPeriod', 'upper-latin': 'alphaUcPeriod',
    'lower-roman': 'romanLcPeriod', 'upper-roman': 'romanUcPeriod',
  };
  const viewW = document.documentElement.clientWidth;
  const viewH = document.documentElement.clientHeight;
  const px = (value) => parseFloat(value) || 0;
  const styleOf = (el) => getComputedStyle(el);

  // --- which family Chromium drew with: the first of the stack this machine has
  const canvas = document.createElement('canvas').getContext('2d');
  const known = new Map();
  function installed(family) {
    if (!known.has(family)) {
      const sample = 'mmmmmmmmmmlli WQ@#0123';
      known.set(family, ['monospace', 'serif', 'sans-serif'].some((base) => {
        canvas.font = `72px ${base}`;
        const bare = canvas.measureText(sample).width;
        canvas.font = `72px "${family}", ${base}`;
        return canvas.measureText(sample).width !== bare;
      }));
    }
    return known.get(family);
  }
  function fontFamily(stack) {
    const names = stack.split(',').map((n) => n.trim().replace(/^["']|["']$/g, '')).filter(Boolean);
    for (const name of names) {
      const generic = GENERIC[name.toLowerCase()];
      if (generic) return generic;
      if (installed(name)) return name;
    }
    return names[0] || 'Arial';
  }

  // --- colours: "rgb(1, 2, 3)" or "rgba(1, 2, 3, 0.5)" → {hex, alpha}
  function colour(text) {
    const m = /rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:[,\s/]+([\d.]+%?))?\s*\)/.exec(text);
    if (!m) return null;
    const hex = [m[1], m[2], m[3]].map((v) => Math.round(+v).toString(16).padStart(2, '0')).join('');
    let alpha = m[4] === undefined ? 1 : parseFloat(m[4]);
    if (m[4] && m[4].endsWith('%')) alpha /= 100;
    return { hex, alpha };
  }

  // --- can this element's text be drawn by PowerPoint as Chromium drew it?
  function drawnPlainly(el) {
    const s = styleOf(el);
    if (s.visibility !== 'visible' || s.writingMode !== 'horizontal-tb') return false;
    if (s.textShadow !== 'none' || (s.webkitBackgroundClip || s.backgroundClip) === 'text') return false;
    if (s.webkitTextFillColor && s.webkitTextFillColor !== s.color) return false;
    if (s.webkitTextStrokeWidth && px(s.webkitTextStrokeWidth) > 0) return false;
    if (s.webkitLineClamp && s.webkitLineClamp !== 'none') return false;
    if (s.textOverflow === 'ellipsis') return false;
    const c = colour(s.color);
    return Boolean(c && c.alpha > 0);
  }
  // Nothing above it bends, fades or clips it.
  function placedPlainly(el, rect) {
    if (rect.width < 1 || rect.height < 1) return false;
    if (rect.left < -1 || rect.top < -1 || rect.right > viewW + 1 || rect.bottom > viewH + 1) return false;
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
      const s = styleOf(node);
      if (s.transform !== 'none' || s.filter !== 'none' || s.mixBlendMode !== 'normal') return false;
      if (px(s.opacity) < 1 || s.clipPath !== 'none' || (s.mask && s.mask !== 'none')) return false;
      if (s.scale !== 'none' || s.rotate !== 'none' || s.translate !== 'none') return false;
      if (node !== el && (s.overflowX !== 'visible' || s.overflowY !== 'visible')) {
        const clip = node.getBoundingClientRect();
        if (rect.left < clip.left - 1 || rect.top < clip.top - 1
            || rect.right > clip.right + 1 || rect.bottom > clip.bottom + 1) return false;
      }
    }
    return true;
  }

  // Only text, <br> and plain inline elements below `el` (a nested list is
  // allowed at the end of a list item: `allowLists`).
  function inlineOnly(el, allowLists) {
    let sawList = false;
    for (const child of el.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) {
        if (sawList && child.data.trim()) return false;
        continue;
      }
      if (child.nodeType !== Node.ELEMENT_NODE) continue;
      const tag = child.tagName.toUpperCase();
      if (tag === 'BR') { if (sawList) return false; continue; }
      const s = styleOf(child);
      if (s.display === 'none') continue;
      if (allowLists && (tag === 'UL' || tag === 'OL')) { sawList = true; continue; }
      if (sawList || ATOMIC.has(tag) || s.display !== 'inline' || s.position === 'fixed') return false;
      if (!['baseline', 'super', 'sub'].includes(s.verticalAlign)) return false;
      if (!drawnPlainly(child) || !inlineOnly(child, false)) return false;
      if (hasPseudoText(child)) return false;
    }
    return true;
  }
  function pseudoContent(el, which) {
    const content = getComputedStyle(el, which).content;
    return content && content !== 'none' && content !== 'normal' ? content : null;
  }
  // Generated text (a ::before "→", a counter) stays in the picture; an
  // inline one would sit inside the line, so such an element is left there.
  function hasPseudoText(el) {
    return ['::before', '::after'].some((which) => {
      const content = pseudoContent(el, which);
      return content !== null && content !== '""';
    });
  }
  const textOf = (el) => (el.textContent || '').trim();

  // --- runs: the text of a block as PowerPoint runs, white space as CSS collapses it
  function runsOf(el, skipLists) {
    const runs = [];
    const walk = (node, link) => {
      for (const child of node.childNodes) {
        if (child.nodeType === Node.TEXT_NODE) {
          const s = styleOf(child.parentElement);
          const keep = /^(pre|pre-wrap|break-spaces)$/.test(s.whiteSpace);
          const keepLines = keep || s.whiteSpace === 'pre-line';
          let text = child.data;
          if (!keep) text = text.replace(keepLines ? /[ \t]+/g : /[\s]+/g, ' ');
          if (s.textTransform === 'lowercase') text = text.toLowerCase();
          if (s.textTransform === 'capitalize') text = text.replace(/\b\p{L}/gu, (c) => c.toUpperCase());
          const parts = keepLines ? text.split('\n') : [text];
          parts.forEach((part, i) => {
            if (i > 0) runs.push({ br: true });
            if (part) runs.push(runStyle(part, s, link));
          });
        } else if (child.nodeType === Node.ELEMENT_NODE) {
          const tag = child.tagName.toUpperCase();
          if (tag === 'BR') { runs.push({ br: true }); continue; }
          if (skipLists && (tag === 'UL' || tag === 'OL')) continue;
          if (styleOf(child).display === 'none') continue;
          walk(child, tag === 'A' && child.href ? child.href : link);
        }
      }
    };
    walk(el, el.closest('a[href]') ? el.closest('a[href]').href : null);
    return tidy(runs);
  }
  function runStyle(text, s, link) {
    const decoration = s.textDecorationLine || '';
    return {
      text,
      font: fontFamily(s.fontFamily),
      size: px(s.fontSize),
      bold: (parseInt(s.fontWeight, 10) || 400) >= 600,
      italic: s.fontStyle !== 'normal',
      underline: decoration.includes('underline'),
      strike: decoration.includes('line-through'),
      color: colour(s.color),
      caps: s.textTransform === 'uppercase' ? 'all' : (s.fontVariantCaps === 'small-caps' ? 'small' : null),
      spacing: s.letterSpacing === 'normal' ? 0 : px(s.letterSpacing),
      shift: shiftOf(s),
      link,
    };
  }
  // <sup> and <sub>: raised or lowered, as PowerPoint's baseline offset
  // (a share of the font size) says it.
  function shiftOf(s) {
    if (s.verticalAlign === 'super') return 'super';
    if (s.verticalAlign === 'sub') return 'sub';
    return null;
  }
  // Collapsible space: none at a line's start or end, never two in a row.
  function tidy(runs) {
    let atLineStart = true;
    for (const run of runs) {
      if (run.br) { atLineStart = true; continue; }
      if (atLineStart) run.text = run.text.replace(/^ +/, '');
      if (run.text) atLineStart = run.text.endsWith(' ');
    }
    for (let i = runs.length - 1, atEnd = true; i >= 0; i -= 1) {
      const run = runs[i];
      if (run.br) { atEnd = true; continue; }
      if (atEnd) run.text = run.text.replace(/ +$/, '');
      if (run.text) atEnd = false;
    }
    return runs.filter((run) => run.br || run.text);
  }

  function align(s) {
    const value = s.textAlign;
    const rtl = s.direction === 'rtl';
    if (value === 'center' || value === '-webkit-center') return 'center';
    if (value === 'justify') return 'justify';
    if (value === 'right' || value === '-webkit-right') return 'right';
    if (value === 'end') return rtl ? 'left' : 'right';
    if (value === 'start') return rtl ? 'right' : 'left';
    return 'left';
  }
  const lineHeight = (s) => (s.lineHeight === 'normal' ? null : px(s.lineHeight));
  function contentBox(el) {
    const r = el.getBoundingClientRect();
    const s = styleOf(el);
    const left = r.left + px(s.borderLeftWidth) + px(s.paddingLeft);
    const top = r.top + px(s.borderTopWidth) + px(s.paddingTop);
    const right = r.right - px(s.borderRightWidth) - px(s.paddingRight);
    const bottom = r.bottom - px(s.borderBottomWidth) - px(s.paddingBottom);
    return { left, top, width: Math.max(1, right - left), height: Math.max(1, bottom - top) };
  }

  // --- blocks and lists
  // Chromium balances the lines of `text-wrap: balance | pretty` text, so
  // its lines end short of the box; PowerPoint does not, and would fill
  // them. The box is narrowed to the lines as drawn, so it wraps alike.
  function linesAsDrawn(el, box, alignment) {
    const s = styleOf(el);
    const wrap = s.textWrapStyle || s.textWrap || '';
    if (!/balance|pretty/.test(wrap)) return box;
    const range = document.createRange();
    range.selectNodeContents(el);
    const rects = Array.from(range.getClientRects()).filter((r) => r.width > 0);
    if (!rects.length) return box;
    const left = Math.min(...rects.map((r) => r.left));
    const right = Math.max(...rects.map((r) => r.right));
    let width = right - box.left;
    let x = box.left;
    if (alignment === 'center') {
      const middle = box.left + box.width / 2;
      width = 2 * Math.max(middle - left, right - middle);
      x = middle - width / 2;
    } else if (alignment === 'right') {
      width = box.left + box.width - left;
      x = left;
    }
    return width > 0 && width < box.width ? { ...box, left: x, width } : box;
  }
  function blockBox(el) {
    const s = styleOf(el);
    const box = linesAsDrawn(el, contentBox(el), align(s));
    return {
      kind: 'block', tag: el.tagName.toLowerCase(), x: box.left, y: box.top, w: box.width, h: box.height,
      paragraphs: [{
        runs: runsOf(el, false), align: align(s), lineHeight: lineHeight(s), spaceBefore: 0,
        level: 0, marL: 0, indent: px(s.textIndent), bullet: null, rtl: s.direction === 'rtl',
      }],
    };
  }
  function bulletOf(li, list) {
    const s = styleOf(li);
    if (s.display !== 'list-item') return null;
    const type = s.listStyleType;
    if (type === 'none') return null;
    if (AUTO_NUMBERS[type]) {
      const start = list.tagName === 'OL' ? (parseInt(list.getAttribute('start'), 10) || 1) : 1;
      return { auto: AUTO_NUMBERS[type], start, color: colour(getComputedStyle(li, '::marker').color) };
    }
    const quoted = /^"(.*)"$/.exec(type);
    const char = quoted ? quoted[1].trim() || '\u2022' : (BULLET_CHARS[type] || '\u2022');
    return { char, color: colour(getComputedStyle(li, '::marker').color) };
  }
  function listMappable(list) {
    const items = Array.from(list.children);
    if (!items.length || !items.every((li) => li.tagName === 'LI')) return false;
    return items.every((li) => {
      const s = styleOf(li);
      if (!['list-item', 'block'].includes(s.display) || !drawnPlainly(li) || hasPseudoText(li)) return false;
      if (!inlineOnly(li, true) || !textOf(li)) return false;
      const nested = Array.from(li.children).filter((c) => /^(UL|OL)$/.test(c.tagName));
      return nested.every((n) => styleOf(n).display === 'none' || listMappable(n));
    });
  }
  function listBox(list) {
    const outer = list.getBoundingClientRect();
    const paragraphs = [];
    let previousBottom = null;
    const walkList = (node, level) => {
      Array.from(node.children).forEach((li) => {
        const s = styleOf(li);
        const box = contentBox(li);
        const nested = Array.from(li.children).filter((c) => /^(UL|OL)$/.test(c.tagName)
          && styleOf(c).display !== 'none');
        const ownBottom = nested.length
          ? nested[0].getBoundingClientRect().top - px(styleOf(nested[0]).marginTop)
          : box.top + box.height;
        const bullet = bulletOf(li, node);
        const marL = Math.max(0, box.left - outer.left);
        const size = px(s.fontSize);
        paragraphs.push({
          runs: runsOf(li, true), align: align(s), lineHeight: lineHeight(s), rtl: s.direction === 'rtl',
          spaceBefore: previousBottom === null ? 0 : Math.max(0, box.top - previousBottom),
          level, marL, indent: bullet ? -Math.min(marL, size * 1.1) : 0, bullet,
        });
        previousBottom = ownBottom;
        nested.forEach((n) => walkList(n, level + 1));
      });
    };
    walkList(list, 0);
    const first = list.firstElementChild ? contentBox(list.firstElementChild) : { top: outer.top };
    return {
      kind: 'list', tag: list.tagName.toLowerCase(), x: outer.left, y: first.top,
      w: outer.width, h: Math.max(1, outer.bottom - first.top), paragraphs,
    };
  }

  const boxes = [];
  const mapped = [];
  function visit(el) {
    const s = styleOf(el);
    if (s.display === 'none' || ATOMIC.has(el.tagName.toUpperCase())) return;
    const rect = el.getBoundingClientRect();
    const tag = el.tagName.toUpperCase();
    if ((tag === 'UL' || tag === 'OL') && s.display !== 'inline' && placedPlainly(el, rect)
        && listMappable(el)) {
      boxes.push(listBox(el));
      mapped.push(el);
      return;
    }
    if (s.display !== 'inline' && s.display !== 'contents' && textOf(el) && drawnPlainly(el)
        && !hasPseudoText(el) && inlineOnly(el, false) && placedPlainly(el, rect)) {
      const box = blockBox(el);
      if (box.paragraphs[0].runs.some((run) => run.text)) {
        boxes.push(box);
        mapped.push(el);
        return;
      }
    }
    for (const child of el.children) visit(child);
  }
  visit(document.body);

  // --- hide the mapped glyphs only: borders keep their own colour, the
  // rest of each box (background, shadow, a ::before square) stays drawn.
  const rules = [
    '[data-pneuma-text], [data-pneuma-text] * { color: transparent !important;'
    + ' -webkit-text-fill-color: transparent !important; text-decoration-color: transparent !important; }',
  ];
  let serial = 0;
  for (const root of mapped) {
    root.setAttribute('data-pneuma-text', '');
    for (const el of [root, ...root.querySelectorAll('*')]) {
      const s = styleOf(el);
      for (const side of ['top', 'right', 'bottom', 'left']) {
        el.style.setProperty(`border-${side}-color`, s.getPropertyValue(`border-${side}-color`), 'important');
      }
      el.style.setProperty('outline-color', s.outlineColor, 'important');
      el.style.setProperty('box-shadow', s.boxShadow, 'important');
      for (const which of ['::before', '::after']) {
        if (pseudoContent(el, which) === null) continue;
        const p = getComputedStyle(el, which);
        serial += 1;
        el.setAttribute(`data-pneuma-pseudo-${which.slice(2)}`, String(serial));
        rules.push(`[data-pneuma-pseudo-${which.slice(2)}="${serial}"]${which} {`
          + ` border-color: ${p.borderTopColor} ${p.borderRightColor} ${p.borderBottomColor} ${p.borderLeftColor}`
          + ` !important; box-shadow: ${p.boxShadow} !important; }`);
      }
    }
  }
  const sheet = document.createElement('style');
  sheet.textContent = rules.join('\n');
  document.head.appendChild(sheet);
  return boxes;
});
