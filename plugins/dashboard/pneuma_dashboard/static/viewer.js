// The dashboard viewer (work in progress): the board's title while the grid lands.
export default {
  capabilities: {},
  mount(element) {
    element.textContent = "dashboard";
    return { update() {}, destroy() { element.textContent = ""; } };
  },
  extractContext() { return null; },
};
