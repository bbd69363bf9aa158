// Closing a popup menu the way people expect: a press outside it, or Escape.
// The shell's menus (the model, the export formats) share it.

import { useEffect } from '../vendor/preact-htm.js';

/** While `open`, call `close()` on a pointer press outside `ref`'s element
 *  or on Escape. */
export function useDismiss(ref, open, close) {
  useEffect(() => {
    if (!open) return undefined;
    const outside = (e) => { if (ref.current && !ref.current.contains(e.target)) close(); };
    const escape = (e) => { if (e.key === 'Escape') close(); };
    document.addEventListener('pointerdown', outside);
    document.addEventListener('keydown', escape);
    return () => {
      document.removeEventListener('pointerdown', outside);
      document.removeEventListener('keydown', escape);
    };
  }, [open]);
}
