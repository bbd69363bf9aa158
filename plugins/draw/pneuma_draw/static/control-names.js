// Two of Excalidraw's own controls miss a name a screen reader or a voice
// user can use (axe-core: button-name on the main menu's trigger,
// label-content-name-mismatch on the zoom button, whose label is not the
// "100%" it shows). They are named here whenever Excalidraw draws them again.

/** Name the controls under `root` now; `menuLabel()` in the page's language. */
export function nameControls(root, menuLabel) {
  const menu = root.querySelector(".main-menu-trigger");
  const label = menuLabel();
  if (menu && menu.getAttribute("aria-label") !== label) menu.setAttribute("aria-label", label);
  // Its name is what it shows ("100%"); what it does stays its tooltip.
  const zoom = root.querySelector(".reset-zoom-button[aria-label]");
  if (zoom) zoom.removeAttribute("aria-label");
}

/** Keep them named while Excalidraw redraws; returns `{rename, stop}`. */
export function watchControlNames(root, menuLabel) {
  const rename = () => nameControls(root, menuLabel);
  const observer = new MutationObserver(rename);
  observer.observe(root, { childList: true, subtree: true });
  return { rename, stop: () => observer.disconnect() };
}
