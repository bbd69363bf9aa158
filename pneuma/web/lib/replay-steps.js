// The pure steps of Replay (lib/replay.js): how long a turn is shown, which
// turn comes next, whose files a turn shows, where "Continue from here" goes.

export const SPEEDS = [0.5, 1, 2, 4];
// How long a turn stays on screen at 1×, once drawn.
export const TURN_MS = 2000;

/** How long turn stays on screen at `speed`. */
export function turnDelay(speed) {
  const known = SPEEDS.includes(speed) ? speed : 1;
  return Math.round(TURN_MS / known);
}

/** The turn after `index` (0-based) of `count`, or null at the end. */
export function nextTurn(index, count) {
  return index + 1 < count ? index + 1 : null;
}

/** The turn whose files Replay draws for turn `index`: its own checkpoint,
 *  else the nearest earlier turn that has one (null: none has). */
export function drawnTurn(turns, index) {
  for (let i = Math.min(index, turns.length - 1); i >= 0; i -= 1) {
    if (turns[i] && turns[i].ref) return i;
  }
  return null;
}

/** What "Continue from here" on turn `index` goes back before: the next
 *  turn (null on the last one, where the conversation already is). */
export function continuePoint(turns, index) {
  const next = turns[index + 1];
  if (!next) return null;
  return { ref: next.ref || null, clientId: next.clientMsgId || null, timestamp: next.timestamp ?? null };
}
