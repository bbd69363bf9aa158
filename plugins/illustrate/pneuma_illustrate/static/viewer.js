// The illustrate viewer (skeleton; the full viewer follows).
export default {
  mount(element) {
    element.textContent = "";
    return { update() {}, async runAction(id) { return { success: false, message: `'${id}' is not supported yet` }; }, destroy() {} };
  },
  extractContext() { return ""; },
};
