// The viewer actions the agent calls (manifest viewerApi.actions):
// navigate-to {tile}, describe-view and get-tile {tile}. Answers are English
// and name tiles by their ids in dashboard.json.

const NAV_WAIT_MS = 2500; // a tile the agent has just written may not have arrived yet
const POLL_MS = 100;

function place(tile) {
  return { x: tile.x, y: tile.y, w: tile.w, h: tile.h };
}

/** What get-tile reports of a tile's definition, by type. */
function definition(tile) {
  if (tile.type === "chart") return { spec: tile.spec };
  if (tile.type === "table") return { columns: tile.columns ?? null, limit: tile.limit };
  if (tile.type === "number") return { field: tile.field ?? null, aggregate: tile.aggregate, format: tile.format ?? null, label: tile.label ?? null };
  return { text: tile.text ?? "" };
}

/** The DashboardViewer's action methods (`this` is the viewer). */
export const actionMethods = {
  async runAction(actionId, params = {}) {
    await this.ready;
    if (actionId === "navigate-to") return this.navigateTo(params);
    if (actionId === "describe-view") return this.describeView();
    if (actionId === "get-tile") return this.getTile(params);
    return { success: false, message: `'${actionId}' is not supported by the dashboard viewer` };
  },

  /** The card of tile `id`, waiting a little for a board still being written. */
  async cardOf(id) {
    const until = Date.now() + NAV_WAIT_MS;
    while (!this.cards.has(id) && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const card = this.cards.get(id);
    if (card) await card.done;
    return card || null;
  },

  unknownTile(id) {
    const ids = [...this.cards.keys()];
    const why = this.boardError ? ` (${this.boardError.message})` : "";
    return { success: false, message: `no tile "${id ?? ""}" on the board${why}; tiles: ${ids.join(", ") || "none"}` };
  },

  async navigateTo({ tile: id, file } = {}) {
    if (!id && file) return this.navigateToFile(file);
    const card = await this.cardOf(id);
    if (!card) return this.unknownTile(id);
    return this.showCard(card);
  },

  /** A change's Show without a tile: the board's top, or the first tile over a data file. */
  async navigateToFile(file) {
    await Promise.all([...this.cards.values()].map((c) => c.done));
    if (file === "dashboard.json") {
      this.shell.scrollTo({ top: 0 });
      return { success: this.text !== null, message: this.text !== null ? "the board is shown" : "no dashboard.json",
        data: { file, tiles: [...this.cards.keys()] } };
    }
    const card = [...this.cards.values()].find((c) => c.tile.data === file);
    if (!card) return { success: false, message: `no tile draws ${file}` };
    return this.showCard(card);
  },

  showCard(card) {
    const id = card.tile.id;
    card.element.scrollIntoView({ block: "nearest", inline: "nearest" });
    card.element.classList.remove("db-flash");
    void card.element.offsetWidth; // restart the highlight's animation
    card.element.classList.add("db-flash");
    const state = card.error ? `does not draw: ${card.error}` : "drawn";
    return { success: true, message: `tile "${id}" shown; ${state}`,
      data: { tile: id, type: card.tile.type, title: card.tile.title, ...place(card.tile),
        rendered: card.status === "rendered", error: card.error } };
  },

  async describeView() {
    await Promise.all([...this.cards.values()].map((c) => c.done));
    const board = this.board;
    const tiles = board ? board.tiles.map((tile) => {
      const card = this.cards.get(tile.id);
      return { id: tile.id, type: tile.type, title: tile.title, ...place(tile), data: tile.data ?? null,
        rendered: card?.status === "rendered", error: card?.error ?? null, rows: card?.rowCount ?? null };
    }) : [];
    const broken = tiles.filter((t) => t.error).length;
    const message = this.boardError ? `dashboard.json cannot be read: ${this.boardError.message}`
      : board ? `board "${board.title}": ${tiles.length} tiles, ${broken} with errors` : "no dashboard.json in the workspace";
    return { success: true, message, data: {
      title: board?.title ?? null, columns: board?.columns ?? null, rowHeight: board?.rowHeight ?? null,
      boardError: this.boardError, tiles, selected: this.selected ?? null, readOnly: this.readOnly } };
  },

  async getTile({ tile: id } = {}) {
    const card = await this.cardOf(id);
    if (!card) return this.unknownTile(id);
    const tile = card.tile;
    const values = card.drawn?.values ? card.drawn.values() : [];
    return { success: true, message: card.error ? `tile "${id}" does not draw: ${card.error}` : `tile "${id}" (${tile.type})`,
      data: { id, type: tile.type, title: tile.title, ...place(tile), data: tile.data ?? null, ...definition(tile),
        rows: card.rowCount ?? null, rendered: card.status === "rendered", error: card.error, values } };
  },
};
