// The board drawn for an export (export.py): the viewer's own tile drawers
// (tiles.js, board.js), its stylesheet and its vega bundle, in a page of
// the exporter's own (pneuma.api ScriptPage), at a fixed width. It answers
// the board's markup (charts as the SVG vega drew), the vega-embed
// stylesheet, the size, each chart's spec with its rows for the standalone
// HTML to draw again, and each tile's error; export.py turns that into a
// PNG, a PDF or one self-contained HTML file.

import { readBoard } from "./board.js";
import { loadRows } from "./data.js";
import { chartSpec, drawChart, drawMarkdown, drawNumber, drawTable } from "./tiles.js";
import { placeTile } from "./grid-drag.js";
import { h } from "/static/lib/viewer-helpers.js";

const VENDOR_URL = new URL("./vendor/vega.iife.js", import.meta.url).href;
const CSS_URL = new URL("./viewer.css", import.meta.url).href;

function loaded(element) {
  return new Promise((resolve, reject) => {
    element.onload = resolve;
    element.onerror = () => reject(new Error(`${element.src || element.href} could not be loaded`));
    document.head.append(element);
  });
}

async function setUp() {
  if (!globalThis.PneumaVega) await loaded(h("script", { src: VENDOR_URL }));
  if (!document.querySelector("link[data-dbx]")) await loaded(h("link", { rel: "stylesheet", href: CSS_URL, "data-dbx": "" }));
  return globalThis.PneumaVega;
}

/** The rows of `path` as the viewer reads them (data.js), from the job's text. */
async function rowsOf(path, job, vendor) {
  if (job.errors?.[path]) throw new Error(job.errors[path]);
  const files = path in job.files ? [{ path, content: job.files[path] }] : [];
  return loadRows(path, files, { contentUrl: () => "" }, vendor.vega);
}

async function drawTile(tile, body, job, vendor) {
  if (tile.error) throw new Error(tile.error);
  const rows = tile.type === "markdown" ? [] : await rowsOf(tile.data, job, vendor);
  if (tile.type === "chart") {
    await drawChart(body, tile, rows, vendor, () => {});
    return chartSpec(tile.spec, rows);
  }
  if (tile.type === "table") drawTable(body, tile, rows, () => {});
  else if (tile.type === "number") drawNumber(body, tile, rows, vendor);
  else drawMarkdown(body, tile);
  return null;
}

/** job: {board: text of dashboard.json, files: {path: text}, width: px}. */
export async function renderBoard(job) {
  const vendor = await setUp();
  const { board, error } = readBoard(job.board);
  if (!board) return { error };
  const grid = h("div", { class: "db-grid" });
  grid.style.setProperty("--db-columns", String(board.columns));
  grid.style.setProperty("--db-row", `${board.rowHeight}px`);
  const root = h("div", { class: "pneuma-dashboard db-readonly db-export" },
    h("header", { class: "db-header" }, h("h2", { class: "db-title", text: board.title })), grid);
  root.style.cssText = `position: static; width: ${job.width}px; overflow: visible;`;
  document.body.style.margin = "0";
  document.body.append(root);
  const charts = [];
  const tiles = [];
  for (const tile of board.tiles) {
    const body = h("div", { class: "db-tile-body" });
    const card = h("section", { class: "db-tile", "data-tile": tile.id, "data-type": tile.type },
      h("div", { class: "db-tile-bar" }, h("span", { class: "db-tile-title", text: tile.title || tile.id })), body);
    placeTile(card, tile);
    grid.append(card);
    tiles.push({ tile, body });
  }
  const report = [];
  for (const { tile, body } of tiles) {
    try {
      const spec = await drawTile(tile, body, job, vendor);
      if (spec) {
        body.firstElementChild?.setAttribute("data-dbx-chart", String(charts.length));
        charts.push({ tile: tile.id, spec });
      }
      report.push({ id: tile.id, title: tile.title || tile.id, error: null });
    } catch (e) {
      const message = String(e?.message || e);
      body.replaceChildren(h("div", { class: "db-tile-error", role: "alert" }, h("pre", { text: message })));
      report.push({ id: tile.id, title: tile.title || tile.id, error: message });
    }
  }
  const box = root.getBoundingClientRect();
  // The standalone file draws its charts again from their rows: holders empty
  const live = root.cloneNode(true);
  for (const holder of live.querySelectorAll("[data-dbx-chart]")) holder.replaceChildren();
  return {
    html: root.outerHTML,
    live_html: live.outerHTML,
    css: document.getElementById("vega-embed-style")?.textContent ?? "",
    width: Math.ceil(box.width),
    height: Math.ceil(box.height),
    charts: JSON.parse(JSON.stringify(charts)),
    tiles: report,
  };
}
