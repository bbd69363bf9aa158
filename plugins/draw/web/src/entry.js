// The one module the draw viewer imports: Excalidraw and the React it runs on,
// bundled together by build.mjs so the page needs no import map and no CDN.
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
  exportToSvg,
  getSceneVersion,
  restore,
  restoreElements,
  serializeAsJSON,
  isLinearElement,
  getCommonBounds,
  getNonDeletedElements,
  getVisibleSceneBounds,
  hashElementsVersion,
  viewportCoordsToSceneCoords,
} from "@excalidraw/excalidraw";
