// The one module the draw viewer imports: Excalidraw and the React it runs on,
// bundled together by build.mjs so the page needs no import map and no CDN.
// Export only what pneuma_draw/static/viewer.js uses.
import "@excalidraw/excalidraw/index.css";

export { createElement, Fragment } from "react";
export { createPortal } from "react-dom";
export { createRoot } from "react-dom/client";
export {
  Excalidraw,
  MainMenu,
  Footer,
  CaptureUpdateAction,
  exportToBlob,
  exportToSvg,  // pneuma_draw/exporter.py: `pneuma export --mode draw --format svg`
  restoreElements,
  serializeAsJSON,
  getCommonBounds,
  getVisibleSceneBounds,
  hashElementsVersion,
} from "@excalidraw/excalidraw";
