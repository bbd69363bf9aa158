// The page the server opens for itself when the agent asks for a viewer
// action and no tab of the person's is open (docs/headless-viewer.md). It is
// this same shell, loaded with `?client=headless`: its socket says so, it
// runs only the requests sent to it alone, and it keeps nothing of the
// person's (no preferences saved, no notifications, no permission asked).

const search = typeof location === 'undefined' ? '' : location.search;

/** True in the server's own headless page, false in a person's tab. */
export const HEADLESS = new URLSearchParams(search).get('client') === 'headless';

if (HEADLESS && typeof document !== 'undefined') document.documentElement.dataset.client = 'headless';

/** Whether this page runs a `viewer_action_request`: the headless page only
 *  those marked `headless` (sent to it alone), a person's tab never those. */
export function runsRequest(message) {
  return Boolean(message && message.headless) === HEADLESS;
}

/** The page's viewer host, once it exists: a request may arrive (the
 *  navigation a new tab is shown once) before the layout has made it. */
export async function viewerHost(ui, waitMs = 10_000) {
  const deadline = Date.now() + waitMs;
  while (!ui.host && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  return ui.host || null;
}
