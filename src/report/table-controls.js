/* global document, window */
// The test tables of the report and of the trend page: element building, sorting, the row count,
// filters, "show more" and sortable headers. Inlined before each page's own script.
window.netstressTable = {
  element(tag, attributes, text) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
    if (text !== undefined) node.textContent = text;
    return node;
  },

  /** Sorts rows in place by `value` (strings alphabetically, numbers ascending), reversed if descending. */
  sortRows(rows, value, descending) {
    rows.sort((x, y) => {
      const a = value(x);
      const b = value(y);
      const order = typeof a === "string" ? a.localeCompare(b) : a - b;
      return descending ? -order : order;
    });
    return rows;
  },

  showCount({ count, more, matching, shown, total }) {
    count.textContent = `showing ${Math.min(matching, shown)} of ${matching} matching (${total} tests)`;
    more.hidden = matching <= shown;
  },

  /**
   * Wires the controls to `render`: each filter `{ id, event, apply(event) }` updates the state and
   * starts again at the first page; "show more" adds pages; a header click sorts by its data-key,
   * twice reverses. Renders once.
   */
  bind({ state, page, render, more, headers, filters }) {
    for (const filter of filters) {
      document.getElementById(filter.id).addEventListener(filter.event, (event) => {
        filter.apply(event);
        state.shown = page;
        render();
      });
    }
    more.addEventListener("click", () => {
      state.shown += page * 5;
      render();
    });
    for (const header of document.querySelectorAll(headers)) {
      header.addEventListener("click", () => {
        const key = header.dataset.key;
        state.descending = state.sortKey === key ? !state.descending : false;
        state.sortKey = key;
        for (const other of document.querySelectorAll(headers)) other.setAttribute("aria-sort", "none");
        header.setAttribute("aria-sort", state.descending ? "descending" : "ascending");
        render();
      });
    }
    render();
  },
};
