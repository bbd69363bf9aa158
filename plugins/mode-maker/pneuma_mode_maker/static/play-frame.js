// The Play frame, the maker's side (docs/mode-maker.md, "Play"): a fresh
// sandboxed frame (allow-scripts only: an opaque origin that cannot reach
// Pneuma's API or token) for each load, the harness page of routes.py in
// it, and the new mode's modules and sample files handed over by
// postMessage once the harness says it is ready.

const PLAY_URL = "/mode-maker/play";
// Under the server's 10 s wait for a viewer action, so the agent hears
// "Play did not answer" rather than a timeout of the maker's page.
const DESCRIBE_MS = 4000;
const ACTION_MS = 8000;

export class PlayFrame {
  constructor(container, events) {
    this.container = container;
    this.events = events; // {onState(state), onSelection(selection, context), onMessage(text)}
    this.frame = null;
    this.payload = null;
    this.generation = 0;
    this.waiting = new Map(); // request id -> resolve
    this.nextId = 1;
    this.state = { status: "idle", problems: [], text: "", selection: null, loads: 0 };
    this.onMessage = this.onMessage.bind(this);
    window.addEventListener("message", this.onMessage);
  }

  /** Mount the viewer again in a new frame: payload is the harness's "play" message. */
  load(payload) {
    this.payload = payload;
    this.generation += 1;
    for (const resolve of this.waiting.values()) resolve(null);
    this.waiting.clear();
    const frame = document.createElement("iframe");
    frame.className = "mm-play-frame";
    frame.setAttribute("sandbox", "allow-scripts");
    frame.setAttribute("referrerpolicy", "no-referrer");
    frame.title = payload.title || "Play";
    frame.dataset.generation = String(this.generation);
    frame.src = `${PLAY_URL}?load=${this.generation}`;
    this.frame?.remove();
    this.frame = frame;
    this.container.appendChild(frame);
    this.setState({ status: "loading", problems: [], text: "", selection: null, loads: this.state.loads + 1 });
  }

  setState(change) {
    this.state = { ...this.state, ...change };
    this.events.onState(this.state);
  }

  onMessage(event) {
    if (!this.frame || event.source !== this.frame.contentWindow) return;
    const message = event.data || {};
    switch (message.type) {
      case "ready":
        this.frame.contentWindow.postMessage({ type: "play", ...this.payload }, "*");
        break;
      case "mounted":
        this.setState({ status: "mounted", text: String(message.text || "") });
        break;
      case "problem":
        this.setState({
          status: this.state.status === "mounted" ? "mounted" : "failed",
          problems: [...this.state.problems, { kind: String(message.kind), message: String(message.message), stack: String(message.stack || "") }].slice(-20),
        });
        break;
      case "selection":
        this.setState({ selection: message.selection ? { value: message.selection, context: String(message.context || "") } : null });
        this.events.onSelection(message.selection || null, String(message.context || ""));
        break;
      case "message":
        this.events.onMessage(String(message.text || ""));
        break;
      case "action-result":
      case "described":
        this.waiting.get(message.id)?.(message);
        this.waiting.delete(message.id);
        break;
    }
  }

  ask(message, ms) {
    if (!this.frame) return Promise.resolve(null);
    const id = this.nextId++;
    const frame = this.frame;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      frame.contentWindow.postMessage({ ...message, id }, "*");
      setTimeout(() => {
        if (this.waiting.delete(id)) resolve(null);
      }, ms);
    });
  }

  /** The new mode's action run in Play: its answer, or null when none came. */
  async runAction(actionId, params) {
    const answer = await this.ask({ type: "action", actionId, params }, ACTION_MS);
    if (answer?.text !== undefined) this.setState({ text: String(answer.text) });
    return answer ? answer.result : null;
  }

  /** The frame's text now (the harness reads it again). */
  async describe() {
    const answer = await this.ask({ type: "describe" }, DESCRIBE_MS);
    if (answer) this.setState({ text: String(answer.text || "") });
    return this.state;
  }

  setLocale(locale) {
    this.frame?.contentWindow?.postMessage({ type: "locale", locale }, "*");
  }

  destroy() {
    window.removeEventListener("message", this.onMessage);
    this.frame?.remove();
    this.frame = null;
  }
}
