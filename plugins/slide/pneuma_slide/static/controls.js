// The slide viewer's small controls: its icons and buttons, and where a
// dragged slide would land in the navigator or the grid.

import { h } from "/static/lib/viewer-helpers.js";

export const ICONS = {
  outline: '<svg viewBox="0 0 20 20" aria-hidden="true"><rect x="2.5" y="3.5" width="15" height="13" rx="2"/><path d="M7.5 3.5v13"/></svg>',
  prev: '<svg viewBox="0 0 20 20" aria-hidden="true"><path d="M12.5 4.5 7 10l5.5 5.5"/></svg>',
  next: '<svg viewBox="0 0 20 20" aria-hidden="true"><path d="M7.5 4.5 13 10l-5.5 5.5"/></svg>',
  single: '<svg viewBox="0 0 20 20" aria-hidden="true"><rect x="2.5" y="4.5" width="15" height="11" rx="1.5"/></svg>',
  grid: '<svg viewBox="0 0 20 20" aria-hidden="true"><rect x="2.5" y="3.5" width="6.5" height="5.5" rx="1"/><rect x="11" y="3.5" width="6.5" height="5.5" rx="1"/><rect x="2.5" y="11" width="6.5" height="5.5" rx="1"/><rect x="11" y="11" width="6.5" height="5.5" rx="1"/></svg>',
  present: '<svg viewBox="0 0 20 20" aria-hidden="true"><path d="M6.5 4.5v11l9-5.5z"/></svg>',
  fit: '<svg viewBox="0 0 20 20" aria-hidden="true"><rect x="3.5" y="3.5" width="13" height="13" rx="1.5" stroke-dasharray="2.5 2"/><path d="M7 10.5l2 2 4-5"/></svg>',
};

export function iconButton(name, onclick, extra = {}) {
  const button = h("button", { type: "button", class: "pns-btn", onclick, ...extra });
  button.innerHTML = ICONS[name];
  return button;
}

/** A button whose label is its tooltip and accessible name (the icon-only ones). */
export function labelButton(button, label) {
  button.title = label;
  button.setAttribute("aria-label", label);
}

/** An icon followed by a text label, and a tooltip. */
export function textButton(button, icon, label, tooltip) {
  button.innerHTML = ICONS[icon];
  button.append(h("span", { text: label }));
  button.title = tooltip;
}

export function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

export function escapeHtml(text) {
  return String(text).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

export function dropIndex(items, x, y, twoD) {
  // The index before which the dragged item would land.
  let best = items.length;
  for (let i = 0; i < items.length; i++) {
    const r = items[i].getBoundingClientRect();
    if (twoD) {
      if (y < r.top) { best = i; break; }
      if (y <= r.bottom && x < r.left + r.width / 2) { best = i; break; }
    } else if (y < r.top + r.height / 2) {
      best = i;
      break;
    }
  }
  return best;
}

export function placeIndicator(indicator, container, items, index, twoD) {
  const host = container.getBoundingClientRect();
  const ref = items[Math.min(index, items.length - 1)];
  if (!ref) return;
  const r = ref.getBoundingClientRect();
  const after = index >= items.length;
  if (twoD) {
    const x = after ? r.right + 8 : r.left - 8;
    indicator.className = "pns-drop pns-drop--v";
    indicator.style.left = `${x - host.left + container.scrollLeft - 2}px`;
    indicator.style.top = `${r.top - host.top + container.scrollTop}px`;
    indicator.style.height = `${r.height}px`;
    indicator.style.width = "";
  } else {
    const y = after ? r.bottom + 3 : r.top - 3;
    indicator.className = "pns-drop pns-drop--h";
    indicator.style.top = `${y - host.top + container.scrollTop - 1}px`;
    indicator.style.left = "8px";
    indicator.style.right = "8px";
    indicator.style.height = "";
  }
}

export function autoScroll(container, y) {
  const r = container.getBoundingClientRect();
  if (y < r.top + 32) container.scrollTop -= 12;
  else if (y > r.bottom - 32) container.scrollTop += 12;
}
