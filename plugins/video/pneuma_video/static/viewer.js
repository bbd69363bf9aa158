// The video mode's player (being written): a placeholder that mounts.
export default {
  mount(element) {
    element.textContent = "video";
    return { update() {}, async runAction() { return { success: false, message: "not ready" }; }, destroy() {} };
  },
  extractContext() { return ""; },
};
