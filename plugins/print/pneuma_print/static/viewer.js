// The print mode's viewer (first cut: the page list; the paged view follows).

export default {
  mount(element, ctx) {
    const render = (files) => {
      const doc = files.find((f) => f.path === "print.json");
      element.textContent = doc ? doc.content : "";
    };
    render(ctx.files);
    return {
      update(files) { render(files); },
      async runAction(actionId) { return { success: false, message: `${actionId} not supported` }; },
      destroy() { element.textContent = ""; },
    };
  },
  extractContext() { return ""; },
};
