import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analyzeRun } from "../../src/report/analyze-run.ts";
import { armRecords, clusteredRecords } from "../analysis/make-records.ts";
import { launchChromium } from "../helpers/launch-chromium.ts";

let dir: string;
let browser: Browser;
let page: Page;
let clusterPage: Page;
const problems: string[] = [];

const STABLE_TESTS = 250;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "netstress-html-"));
  const records = [
    ...armRecords({
      name: "[sig-network] regressed <script>alert(1)</script>",
      arm: "pr",
      runs: 10,
      failed: 6,
      flaked: 1,
    }),
    ...armRecords({ name: "[sig-network] regressed <script>alert(1)</script>", arm: "baseline", runs: 10 }),
    ...armRecords({ name: "[sig-network] flaky dns", arm: "pr", runs: 10, flaked: 2, component: "sdn" }).map(
      (r) => ({ ...r, labels: ["Feature:DNS"], tags: { owner: "dns-team" } }),
    ),
    ...armRecords({
      name: "[sig-network] flaky dns",
      arm: "baseline",
      runs: 10,
      flaked: 3,
      component: "sdn",
    }),
    ...armRecords({ name: "[sig-network] brand new", arm: "pr", runs: 10, lifecycle: "informing" }),
    ...Array.from({ length: STABLE_TESTS }, (_, index) => [
      ...armRecords({ name: `[sig-network] stable ${String(index).padStart(3, "0")}`, arm: "pr", runs: 10 }),
      ...armRecords({
        name: `[sig-network] stable ${String(index).padStart(3, "0")}`,
        arm: "baseline",
        runs: 10,
      }),
    ]).flat(),
  ];
  await mkdir(join(dir, "run"));
  await writeFile(join(dir, "run", "results.jsonl"), records.map((r) => JSON.stringify(r)).join("\n"));
  const { paths } = await analyzeRun({ pr: join(dir, "run"), outDir: join(dir, "out") });

  browser = await launchChromium();
  page = await browser.newPage();
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning")
      problems.push(`${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("request", (request) => {
    if (!request.url().startsWith("file:")) problems.push(`network request: ${request.url()}`);
  });
  await page.goto(pathToFileURL(paths.html).href);
  await page.waitForSelector("#verdicts tbody tr");

  // The same report with clusters: each arm on its own 6 clusters × 4 iterations; PR cluster 0 is
  // bad for many tests at once, and one test regressed on every PR cluster.
  const clean = [0, 0, 0, 0, 0, 0];
  const both = (name: string, pr: number[], baseline: number[]) => [
    ...clusteredRecords({ name, arm: "pr", failedPerCluster: pr }),
    ...clusteredRecords({ name, arm: "baseline", failedPerCluster: baseline }),
  ];
  const clustered = [
    ...both("[sig-network] regressed everywhere", [2, 2, 2, 2, 2, 2], clean),
    ...Array.from({ length: 30 }, (_, index) =>
      both(
        `[sig-network] weather ${index}`,
        [3, index % 4 === 0 ? 1 : 0, 0, 0, 0, 0],
        [0, 0, index % 6 === 0 ? 1 : 0, 0, 0, 0],
      ),
    ).flat(),
    ...Array.from({ length: 20 }, (_, index) => both(`[sig-network] solid ${index}`, clean, clean)).flat(),
  ];
  await mkdir(join(dir, "clustered"));
  await writeFile(
    join(dir, "clustered", "results.jsonl"),
    clustered.map((r) => JSON.stringify(r)).join("\n"),
  );
  const clusteredReport = await analyzeRun({
    pr: join(dir, "clustered"),
    outDir: join(dir, "clustered-out"),
  });
  clusterPage = await browser.newPage();
  clusterPage.on("pageerror", (error) => problems.push(`cluster report pageerror: ${error.message}`));
  await clusterPage.goto(pathToFileURL(clusteredReport.paths.html).href);
  await clusterPage.waitForSelector("#cluster-grid tr");
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true });
});

const rowCount = () => page.locator("#verdicts tbody tr").count();
const firstColumn = (column: number) =>
  page.locator(`#verdicts tbody tr td:nth-child(${column})`).allTextContents();

describe("HTML report in headless Chromium", () => {
  it("opens offline without console errors, page errors or network requests", () => {
    expect(problems).toEqual([]);
  });

  it("draws both charts with Chart.js on canvases of real size", async () => {
    // Evaluated in the page (a string: this project compiles without DOM types).
    const charts = (await page.evaluate(`["rates-chart", "timeline-chart"].map((id) => {
      const canvas = document.getElementById(id);
      const chart = Chart.getChart(canvas);
      return { width: canvas.width, height: canvas.height, points: chart ? chart.data.datasets[0].data.length : -1 };
    })`)) as { width: number; height: number; points: number }[];
    expect(charts[0]!.width).toBeGreaterThan(100);
    expect(charts[0]!.points).toBe(3); // regressed, brand new, flaky: the tests that are not stable
    expect(charts[1]!.height).toBeGreaterThan(50);
    expect(charts[1]!.points).toBe(10); // one bar per iteration
  });

  it("shows the per-iteration grid with each failure where it happened", async () => {
    const firstRow = await page.locator("#timeline-grid tr").first().locator(".cell").allTextContents();
    expect(firstRow.join("")).toBe("FFFFFFKPPP");
  });

  it("renders the verdict table a page at a time, most important first, with test names as text", async () => {
    expect(await rowCount()).toBe(200);
    expect(await page.locator("#row-count").textContent()).toBe(
      `showing 200 of ${STABLE_TESTS + 3} matching (${STABLE_TESTS + 3} tests)`,
    );
    expect((await firstColumn(2))[0]).toBe("[sig-network] regressed <script>alert(1)</script>");
    // Pass rates with 95% Wilson intervals: 3 of 10 clean iterations in the PR, 10 of 10 in the baseline.
    expect((await firstColumn(7))[0]).toBe("30% (11%–60%)");
    expect((await firstColumn(8))[0]).toBe("100% (72%–100%)");
    await page.click("#show-more");
    expect(await rowCount()).toBe(STABLE_TESTS + 3);
  });

  it("filters by verdict class, by chip, by lifecycle and by text", async () => {
    await page.selectOption("#filter-class", "regression");
    expect(await firstColumn(1)).toEqual(["regression"]);
    await page.selectOption("#filter-class", "");
    await page.click('#class-counts button[data-class="known-flake"]');
    expect(await firstColumn(2)).toEqual(["[sig-network] flaky dns"]);
    await page.click('#class-counts button[data-class="known-flake"]');
    await page.selectOption("#filter-lifecycle", "informing");
    expect(await firstColumn(2)).toEqual(["[sig-network] brand new"]);
    await page.selectOption("#filter-lifecycle", "");
    await page.fill("#filter-text", "stable 24");
    expect(await firstColumn(2)).toEqual(
      Array.from({ length: 10 }, (_, i) => `[sig-network] stable ${240 + i}`),
    );
    await page.fill("#filter-text", "");
  });

  it("filters by a spec's label or tag", async () => {
    await page.fill("#filter-text", "feature:dns");
    expect(await firstColumn(2)).toEqual(["[sig-network] flaky dns"]);
    await page.fill("#filter-text", "owner=dns-team");
    expect(await firstColumn(2)).toEqual(["[sig-network] flaky dns"]);
    await page.fill("#filter-text", "");
  });

  it("sorts by a column on click, and reverses on a second click", async () => {
    const header = page.locator('#verdicts th[data-key="n"]');
    await header.click();
    expect(await header.getAttribute("aria-sort")).toBe("ascending");
    const ascending = await firstColumn(2);
    expect(ascending.slice(0, 3)).toEqual([
      "[sig-network] brand new",
      "[sig-network] flaky dns",
      "[sig-network] regressed <script>alert(1)</script>",
    ]);
    await header.click();
    expect(await header.getAttribute("aria-sort")).toBe("descending");
    expect((await firstColumn(2))[0]).toBe(`[sig-network] stable ${STABLE_TESTS - 1}`);
    await page.locator('#verdicts th[data-key="prf"]').click();
    await page.locator('#verdicts th[data-key="prf"]').click();
    expect((await firstColumn(5))[0]).toBe("7/10 (1 flaked)");
  });
});

describe("HTML report with clusters, in headless Chromium", () => {
  it("shows a cluster × test grid beside the iteration grid, with the bad cluster marked", async () => {
    expect(problems).toEqual([]);
    expect(await clusterPage.locator("#timeline-grid tr").count()).toBeGreaterThan(0);
    const headers = clusterPage.locator("#cluster-grid th[data-cluster]");
    expect(await headers.count()).toBe(12);
    expect(await clusterPage.locator('#cluster-grid th[data-bad="true"]').allTextContents()).toEqual([
      "PR pr-cluster-0 bad",
    ]);
  });

  it("puts each test's failed/run iterations under the cluster they happened on", async () => {
    const rows = clusterPage.locator("#cluster-grid tr");
    const names = await rows.locator("td.name").allTextContents();
    const regressed = names.findIndex((name) => name.endsWith("regressed everywhere"));
    expect(regressed).toBeGreaterThanOrEqual(0);
    // Row 0 is the header.
    const cells = await rows
      .nth(regressed + 1)
      .locator(".cluster-cell")
      .allTextContents();
    expect(cells).toEqual([
      "2/4",
      "2/4",
      "2/4",
      "2/4",
      "2/4",
      "2/4",
      "0/4",
      "0/4",
      "0/4",
      "0/4",
      "0/4",
      "0/4",
    ]);
    const weather = names.findIndex((name) => name.endsWith("weather 1"));
    const ringed = await rows
      .nth(weather + 1)
      .locator(".cluster-cell.dominant")
      .allTextContents();
    expect(ringed).toEqual(["3/4"]);
  });

  it("says which rule ran and how many clusters each arm had", async () => {
    const header = await clusterPage.locator("header").textContent();
    expect(header).toContain("PR 24 iterations on 6 cluster(s)");
    expect(header).toContain("cluster rule (PR 6 cluster(s), baseline 6)");
    expect(await clusterPage.locator("section:last-of-type").textContent()).toContain("the cluster rule");
  });
});
