/* global document, window, Chart */
// Runs in the trend page: draws the charts and the sortable, filterable test table from the inlined view.
(function main() {
  const { element, sortRows, showCount, bind } = window.netstressTable;
  const view = JSON.parse(document.getElementById("trend-data").textContent);
  const PAGE = 200;
  const state = { text: "", firstBadOnly: false, sortKey: "moved", descending: true, shown: PAGE };
  const firstBad = new Map(view.firstBad.map((f) => [f.test, f]));
  const labels = view.payloads.map((p) => p.release);
  const percent = (rate) => `${(rate * 100).toFixed(rate > 0 && rate < 0.1 ? 1 : 0)}%`;
  const rateText = (rate) => (rate ? `${percent(rate[0])} (${percent(rate[1])}–${percent(rate[2])})` : "—");
  const iterations = (test) => test.rates.reduce((sum, rate) => sum + (rate ? rate[3] : 0), 0);
  const palette = ["#1565c0", "#c62828", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f", "#5d4037", "#455a64"];

  // The tests that moved most, one line each across payloads (gaps where a test did not run).
  const moversCanvas = document.getElementById("movers-chart");
  const movers = view.tests.filter((t) => t.moved !== null).slice(0, Number(moversCanvas.dataset.lines));
  new Chart(moversCanvas, {
    type: "line",
    data: {
      labels,
      datasets: movers.map((test, index) => ({
        label: test.name,
        data: test.rates.map((rate) => (rate ? rate[0] * 100 : null)),
        borderColor: palette[index % palette.length],
        backgroundColor: palette[index % palette.length],
        spanGaps: true,
      })),
    },
    options: {
      animation: false,
      maintainAspectRatio: false,
      scales: { y: { min: 0, max: 100, title: { display: true, text: "pass rate %" } } },
    },
  });

  // One test: its interval on each payload as a floating bar, the pass rate as a point.
  const testChart = new Chart(document.getElementById("test-chart"), {
    data: {
      labels,
      datasets: [
        { type: "bar", label: "95% interval", data: [], backgroundColor: "rgba(21,101,192,.35)" },
        {
          type: "line",
          label: "pass rate",
          data: [],
          showLine: false,
          pointRadius: 4,
          borderColor: "#1565c0",
          backgroundColor: "#1565c0",
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
            footer: (items) => {
              const rate = chartedTest && chartedTest.rates[items[0].dataIndex];
              return rate ? `${rate[4]} of ${rate[3]} iterations failed (${rate[5]} flaked)` : "";
            },
          },
        },
      },
    },
  });
  let chartedTest = null;
  function chartTest(test) {
    chartedTest = test;
    document.getElementById("chart-test-name").textContent = test ? test.name : "—";
    testChart.data.datasets[0].data = test
      ? test.rates.map((r) => (r ? [r[1] * 100, r[2] * 100] : null))
      : [];
    testChart.data.datasets[1].data = test ? test.rates.map((r) => (r ? r[0] * 100 : null)) : [];
    testChart.update();
  }
  chartTest(view.tests[0] || null);

  // The table: filter, sort, a page at a time.
  const sortValue = {
    n: (t) => t.name,
    latest: (t) => t.latest[0],
    earlier: (t) => (t.earlier ? t.earlier[0] : 2),
    moved: (t) => (t.moved === null ? -1 : Math.abs(t.moved)),
    runs: iterations,
    fb: (t) => (firstBad.has(t.name) ? firstBad.get(t.name).index : -1),
  };
  const body = document.querySelector("#verdicts tbody");
  const more = document.getElementById("show-more");
  const count = document.getElementById("row-count");

  function visibleTests() {
    const needle = state.text.toLowerCase();
    const rows = view.tests.filter(
      (t) =>
        (!state.firstBadOnly || firstBad.has(t.name)) && (!needle || t.name.toLowerCase().includes(needle)),
    );
    return sortRows(rows, sortValue[state.sortKey], state.descending);
  }

  function render() {
    const rows = visibleTests();
    body.replaceChildren();
    for (const test of rows.slice(0, state.shown)) {
      const finding = firstBad.get(test.name);
      const tr = element("tr", { "data-test": test.name });
      tr.append(element("td", { class: "mono" }, test.name));
      tr.append(element("td", { class: "num" }, rateText(test.latest)));
      tr.append(element("td", { class: "num" }, rateText(test.earlier)));
      tr.append(
        element(
          "td",
          { class: `num${test.moved !== null && test.moved < 0 ? " worse" : ""}` },
          test.moved === null ? "—" : `${test.moved > 0 ? "+" : ""}${test.moved}`,
        ),
      );
      tr.append(element("td", { class: "num" }, String(iterations(test))));
      tr.append(element("td", { class: "mono" }, finding ? finding.release : "—"));
      tr.addEventListener("click", () => chartTest(test));
      body.append(tr);
    }
    showCount({ count, more, matching: rows.length, shown: state.shown, total: view.tests.length });
  }

  bind({
    state,
    page: PAGE,
    render,
    more,
    headers: "#verdicts th[data-key]",
    filters: [
      { id: "filter-text", event: "input", apply: (event) => (state.text = event.target.value) },
      {
        id: "filter-first-bad",
        event: "change",
        apply: (event) => (state.firstBadOnly = event.target.checked),
      },
    ],
  });
})();
