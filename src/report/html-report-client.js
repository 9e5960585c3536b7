/* global document, window, Chart */
// Runs in the report page: renders the charts and the verdict table from the inlined JSON data.
(function main() {
  const { element, sortRows, showCount, bind } = window.netstressTable;
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const PAGE = 200;
  const state = { text: "", cls: "", lifecycle: "", sortKey: null, descending: false, shown: PAGE };
  const failed = (arm) => arm[2] + arm[3];
  const percent = (rate) =>
    rate === null || rate === undefined ? "—" : `${(rate * 100).toFixed(rate > 0 && rate < 0.1 ? 1 : 0)}%`;
  const pval = (p) => (p === null ? "—" : p < 1e-4 ? p.toExponential(1) : p.toPrecision(2));
  const armText = (arm) =>
    arm[0] === 0
      ? arm[4] > 0
        ? `skipped ×${arm[4]}`
        : "—"
      : `${failed(arm)}/${arm[0]}${arm[3] > 0 ? ` (${arm[3]} flaked)` : ""}`;
  const classLabel = Object.fromEntries(data.classes.map((c) => [c.id, c.label]));
  const classOrder = Object.fromEntries(data.classes.map((c, index) => [c.id, index]));

  // Verdict class chips: counts, and a click filters the table.
  const chips = document.getElementById("class-counts");
  const select = document.getElementById("filter-class");
  for (const cls of data.classes) {
    if (cls.count === 0) continue;
    const chip = element(
      "button",
      { type: "button", "data-class": cls.id, "aria-pressed": "false" },
      `${cls.label}: ${cls.count}`,
    );
    chip.addEventListener("click", () => {
      state.cls = state.cls === cls.id ? "" : cls.id;
      select.value = state.cls;
      render();
    });
    chips.append(chip);
    select.append(element("option", { value: cls.id }, cls.label));
  }

  // Pass rates with confidence intervals: floating bars for the interval, points for the estimate.
  const labels = data.rates.map((_, index) => `#${index + 1}`);
  const interval = (rate) => (rate ? [rate[1] * 100, rate[2] * 100] : null);
  const point = (rate) => (rate ? rate[0] * 100 : null);
  new Chart(document.getElementById("rates-chart"), {
    data: {
      labels,
      datasets: [
        {
          type: "bar",
          label: "PR 95% interval",
          data: data.rates.map((r) => interval(r.pr)),
          backgroundColor: "rgba(21,101,192,.35)",
        },
        {
          type: "bar",
          label: "baseline 95% interval",
          data: data.rates.map((r) => interval(r.b)),
          backgroundColor: "rgba(109,109,109,.35)",
        },
        {
          type: "line",
          label: "PR pass rate",
          data: data.rates.map((r) => point(r.pr)),
          showLine: false,
          pointRadius: 4,
          borderColor: "#1565c0",
          backgroundColor: "#1565c0",
        },
        {
          type: "line",
          label: "baseline pass rate",
          data: data.rates.map((r) => point(r.b)),
          showLine: false,
          pointRadius: 4,
          borderColor: "#6d6d6d",
          backgroundColor: "#6d6d6d",
        },
      ],
    },
    options: {
      animation: false,
      maintainAspectRatio: false,
      scales: { y: { min: 0, max: 100, title: { display: true, text: "pass rate %" } } },
      plugins: {
        tooltip: {
          callbacks: {
            title: (items) =>
              `${data.rates[items[0].dataIndex].n} (${classLabel[data.rates[items[0].dataIndex].k]})`,
          },
        },
      },
    },
  });

  // Failures per iteration, both arms.
  const iterations = Math.max(data.timeline.pr.length, data.timeline.baseline.length);
  new Chart(document.getElementById("timeline-chart"), {
    type: "bar",
    data: {
      labels: Array.from({ length: iterations }, (_, index) => String(index)),
      datasets: [
        { label: "PR: tests failed or flaked", data: data.timeline.pr, backgroundColor: "#1565c0" },
        {
          label: "baseline: tests failed or flaked",
          data: data.timeline.baseline,
          backgroundColor: "#9e9e9e",
        },
      ],
    },
    options: {
      animation: false,
      maintainAspectRatio: false,
      scales: {
        x: { title: { display: true, text: "iteration" } },
        y: { beginAtZero: true, ticks: { precision: 0 } },
      },
    },
  });

  // Disruption timelines: one chart per test, a row per arm and iteration, a bar per failing interval.
  const PATH_COLORS = [
    "#c62828",
    "#1565c0",
    "#2e7d32",
    "#ef6c00",
    "#6a1b9a",
    "#00838f",
    "#ad1457",
    "#4e342e",
  ];
  (data.disruption || []).forEach((chart, index) => {
    const canvas = document.getElementById(`disruption-chart-${index}`);
    if (!canvas) return;
    new Chart(canvas, {
      type: "bar",
      data: {
        labels: chart.rows,
        datasets: chart.series.map((series, k) => ({
          label: series.label,
          data: series.bars.map(([row, from, to, reason]) => ({
            y: chart.rows[row],
            x: [from, Math.max(to, from + 0.2)],
            reason,
          })),
          backgroundColor: PATH_COLORS[k % PATH_COLORS.length],
          grouped: false,
          // Thinner bars for later paths, so that intervals two paths share both show.
          barPercentage: Math.max(0.3, 0.9 - 0.2 * k),
          categoryPercentage: 1,
        })),
      },
      options: {
        indexAxis: "y",
        animation: false,
        maintainAspectRatio: false,
        scales: {
          x: {
            type: "linear",
            beginAtZero: true,
            title: { display: true, text: "seconds since the test started" },
          },
          y: { type: "category", ticks: { autoSkip: false } },
        },
        plugins: {
          tooltip: {
            callbacks: {
              label: (item) =>
                `${item.dataset.label}: ${item.raw.x[0]}–${item.raw.x[1]} s, ${item.raw.reason}`,
            },
          },
        },
      },
    });
  });

  // Per-iteration grid of the charted tests.
  const grid = document.getElementById("timeline-grid");
  data.grid.forEach((row, index) => {
    for (const [arm, letters] of [
      ["PR", row.pr],
      ["baseline", row.b],
    ]) {
      const tr = element("tr");
      tr.append(element("td", { class: "name", title: row.n }, arm === "PR" ? `#${index + 1} ${row.n}` : ""));
      tr.append(element("td", {}, arm));
      const cells = element("td");
      for (const letter of letters)
        cells.append(element("span", { class: `cell ${letter === "-" ? "none" : letter}` }, letter));
      tr.append(cells);
      grid.append(tr);
    }
  });

  // Failures per cluster: one column per cluster under test, bad clusters marked.
  if (data.clusterGrid) {
    const table = document.getElementById("cluster-grid");
    const { clusters, rows } = data.clusterGrid;
    const head = element("tr");
    head.append(element("th", {}, ""));
    for (const cluster of clusters) {
      const arm = cluster.a === "pr" ? "PR" : "baseline";
      head.append(
        element(
          "th",
          {
            class: cluster.bad ? "bad" : "",
            title: `${arm} cluster ${cluster.n}: ×${cluster.r} the failures its tests' rates predict${cluster.bad ? " — bad" : ""}`,
            "data-cluster": cluster.n,
            "data-bad": String(cluster.bad),
          },
          `${arm} ${cluster.n}${cluster.bad ? " bad" : ""}`,
        ),
      );
    }
    table.append(head);
    rows.forEach((row, index) => {
      const tr = element("tr");
      tr.append(element("td", { class: "name", title: row.n }, `#${index + 1} ${row.n}`));
      row.c.forEach((count, column) => {
        const td = element("td");
        if (count) {
          const [runs, failedRuns] = count;
          const share = runs > 0 ? failedRuns / runs : 0;
          const cell = element(
            "span",
            {
              class: `cluster-cell${row.d === clusters[column].n && failedRuns > 0 ? " dominant" : ""}`,
              title: `${clusters[column].n}: ${failedRuns} of ${runs} failed`,
            },
            `${failedRuns}/${runs}`,
          );
          if (failedRuns > 0) {
            cell.style.background = `rgba(198, 40, 40, ${0.2 + 0.8 * share})`;
            cell.style.color = share > 0.4 ? "#fff" : "#000";
          }
          td.append(cell);
        }
        tr.append(td);
      });
      table.append(tr);
    });
  }

  // The verdict table: filter, sort, and render a page at a time.
  const sortValue = {
    k: (t) => classOrder[t.k],
    n: (t) => t.n,
    c: (t) => t.c,
    l: (t) => t.l,
    prf: (t) => (t.pr[0] ? failed(t.pr) / t.pr[0] : -1),
    bf: (t) => (t.b[0] ? failed(t.b) / t.b[0] : -1),
    p: (t) => (t.p === null ? 2 : t.p),
    q: (t) => (t.q === null ? 2 : t.q),
    m: (t) => (t.m === null ? 2 : t.m),
    pc: (t) => (t.pc ? t.pc[0] : 2),
    bc: (t) => (t.bc ? t.bc[0] : 2),
  };
  const rateText = (rate) => (rate ? `${percent(rate[0])} (${percent(rate[1])}–${percent(rate[2])})` : "—");
  const body = document.querySelector("#verdicts tbody");
  const more = document.getElementById("show-more");
  const count = document.getElementById("row-count");

  function visibleTests() {
    const needle = state.text.toLowerCase();
    const rows = data.tests.filter(
      (t) =>
        (!state.cls || t.k === state.cls) &&
        (!state.lifecycle || t.l.startsWith(state.lifecycle)) &&
        (!needle ||
          t.n.toLowerCase().includes(needle) ||
          t.c.toLowerCase().includes(needle) ||
          t.g.some((g) => g.toLowerCase().includes(needle))),
    );
    return state.sortKey ? sortRows(rows, sortValue[state.sortKey], state.descending) : rows;
  }

  function render() {
    const rows = visibleTests();
    body.replaceChildren();
    for (const t of rows.slice(0, state.shown)) {
      const tr = element("tr", { "data-class": t.k });
      tr.append(element("td", { class: `cls cls-${t.k}` }, classLabel[t.k]));
      tr.append(element("td", { class: "mono" }, t.n));
      tr.append(element("td", {}, t.c));
      tr.append(element("td", {}, t.l));
      tr.append(element("td", { class: "num" }, armText(t.pr)));
      tr.append(element("td", { class: "num" }, armText(t.b)));
      tr.append(element("td", { class: "num" }, rateText(t.pc)));
      tr.append(element("td", { class: "num" }, rateText(t.bc)));
      tr.append(element("td", { class: "num" }, pval(t.p)));
      tr.append(element("td", { class: "num" }, pval(t.q)));
      tr.append(element("td", { class: "num" }, percent(t.m)));
      tr.append(element("td", { class: "why" }, t.r));
      body.append(tr);
    }
    showCount({ count, more, matching: rows.length, shown: state.shown, total: data.tests.length });
    for (const chip of chips.querySelectorAll("button"))
      chip.setAttribute("aria-pressed", String(chip.dataset.class === state.cls));
  }

  bind({
    state,
    page: PAGE,
    render,
    more,
    headers: "#verdicts th[data-key]",
    filters: [
      { id: "filter-text", event: "input", apply: (event) => (state.text = event.target.value) },
      { id: "filter-class", event: "change", apply: (event) => (state.cls = event.target.value) },
      { id: "filter-lifecycle", event: "change", apply: (event) => (state.lifecycle = event.target.value) },
    ],
  });
})();
