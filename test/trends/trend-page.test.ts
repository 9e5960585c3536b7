import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createHistoryStore } from "../../src/history/history-store.ts";
import { createRegistry } from "../../src/registry/create-registry.ts";
import type { TrendView } from "../../src/report/trend-view.ts";
import { registryChangesBetween } from "../../src/trends/registry-changes-between.ts";
import { createStoredTrendViews } from "../../src/trends/stored-trend-views.ts";
import { createTrendRoutes } from "../../src/trends/trend-routes.ts";
import { pushPayload } from "../helpers/oci-push-payload.ts";
import { runNetstress } from "../helpers/run-netstress.ts";
import { startRegistry, type RegistryServer } from "../helpers/start-registry.ts";
import { launchChromium } from "../helpers/launch-chromium.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const STREAM = "4.20.0-0.nightly";
const PAYLOADS = 10;
/** The payload at which ovn-kubernetes gets a new commit and its test starts failing. */
const BAD = 6;
const REGRESSED = "[sig-network] pods reach pods across nodes <script>alert(1)</script>";
const STABLE = Array.from({ length: 30 }, (_, i) => `[sig-network] stable ${String(i).padStart(2, "0")}`);
const OLD_OVN = "1".repeat(40);
const NEW_OVN = "9".repeat(40);

let registryServer: RegistryServer;
let redis: Redis;
let prefix: string;
let dir: { path: string; remove(): Promise<void> };
let http: Server;
let pageUrl: string;
let browser: Browser;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  registryServer = await startRegistry();
  redis = new Redis(inject("redisUrl"), { maxRetriesPerRequest: null });
  prefix = `t-${randomUUID()}`;
  dir = await tempDir();
  const history = createHistoryStore({ redis, prefix });
  const common = {
    url: registryServer.url,
    host: registryServer.host,
    repository: "ocp/release",
    arches: ["amd64"],
  };
  const started = Date.now();
  for (let index = 0; index < PAYLOADS; index++) {
    const release = `${STREAM}-2026-11-${String(index + 1).padStart(2, "0")}-000000`;
    const pushed = await pushPayload({
      ...common,
      name: release,
      releaseTag: `p${index}`,
      components: [
        {
          tag: "ovn-kubernetes",
          binary: `ovn ${index >= BAD ? 2 : 1}`,
          commit: index >= BAD ? NEW_OVN : OLD_OVN,
        },
        { tag: "sdn", binary: "sdn", commit: "2".repeat(40) },
        // Rebuilt on every payload: a new digest, the same commit.
        { tag: "cli", binary: `cli build ${index}`, commit: "3".repeat(40) },
      ],
    });
    const payload = { pullspec: `${registryServer.host}/ocp/release@${pushed.digest}`, release };
    // Two periodic runs of 10 iterations per payload; the regressed test fails 6 of 20 from BAD on.
    for (const run of [0, 1]) {
      await history.record({
        stream: STREAM,
        arch: "amd64",
        runId: `run-${index}-${run}`,
        at: new Date(started - (PAYLOADS - index) * 3_600_000 + run * 60_000),
        payload,
        tests: [
          { name: REGRESSED, runs: 10, passes: index >= BAD ? 7 : 10 },
          ...STABLE.map((name, i) => ({
            name,
            runs: 10,
            passes: 10,
            flakes: 0,
            ...(i === 0 && run === 0 && index === 2 ? { passes: 9, flakes: 1 } : {}),
          })),
        ],
      });
    }
  }
  const registry = await createRegistry({ cacheDir: dir.path });
  const routes = createTrendRoutes({
    views: createStoredTrendViews({
      history,
      changesBetween: registryChangesBetween({ redis, prefix, registry }),
      redis,
      prefix,
    }),
  });
  http = createServer((req, res) => {
    Promise.resolve(routes(req, res)).then(
      (handled) => handled || res.writeHead(404).end(),
      (error: unknown) => res.writeHead(500).end(String(error)),
    );
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  pageUrl = `${base}/streams/${STREAM}/amd64`;

  browser = await launchChromium();
  page = await browser.newPage();
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning")
      problems.push(`${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("request", (request) => {
    if (request.url() !== pageUrl) problems.push(`request: ${request.url()}`);
  });
  // The first request finds no view of this history yet and starts computing it.
  const first = await fetch(pageUrl);
  expect([first.status, await first.text()]).toEqual([
    503,
    `the trends of ${STREAM} on amd64 are being computed; this page reloads itself\n`,
  ]);
  for (let waited = 0; (await fetch(pageUrl)).status !== 200; waited += 200) {
    if (waited > 60_000) throw new Error("the trend view was not computed within a minute");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await page.goto(pageUrl);
  await page.waitForSelector("#verdicts tbody tr").catch((error: unknown) => {
    throw new Error(`the page did not render its table (${problems.join("; ")})`, { cause: error });
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => http?.close(resolve));
  await redis?.quit();
  await registryServer?.stop();
  await dir?.remove();
});

const column = (n: number) => page.locator(`#verdicts tbody tr td:nth-child(${n})`).allTextContents();
const pageData = async () => JSON.parse((await page.locator("#trend-data").textContent())!) as TrendView;

describe("the trend page of a stream, in headless Chromium", () => {
  it("loads without console errors, page errors or requests elsewhere", () => {
    expect(problems).toEqual([]);
  });

  it("draws both charts on canvases that are not blank", async () => {
    // Evaluated in the page (a string: this project compiles without DOM types).
    const charts = (await page.evaluate(`["movers-chart", "test-chart"].map((id) => {
      const canvas = document.getElementById(id);
      const chart = Chart.getChart(canvas);
      const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
      let painted = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) painted++;
      return { width: canvas.width, lines: chart.data.datasets.length, points: chart.data.datasets[0].data.length, painted };
    })`)) as { width: number; lines: number; points: number; painted: number }[];
    expect(charts[0]!.width).toBeGreaterThan(100);
    expect(charts[0]!.points).toBe(PAYLOADS);
    expect(charts[0]!.painted).toBeGreaterThan(1000);
    expect(charts[1]!.points).toBe(PAYLOADS);
    expect(charts[1]!.painted).toBeGreaterThan(1000);
    // The test that moved most is charted first, its name as text.
    expect(await page.locator("#chart-test-name").textContent()).toBe(REGRESSED);
  });

  it("lists the tests that moved most first, with pass rates and Wilson intervals", async () => {
    expect((await column(1))[0]).toBe(REGRESSED);
    // Newest payload: 14 of 20 passed; the nine before: 6 × 20 + 3 × 14 = 162 of 180.
    expect((await column(2))[0]).toBe("70% (48%–85%)");
    expect((await column(3))[0]).toBe("90% (85%–94%)");
    expect((await column(4))[0]).toBe("-20");
    // One flake on one payload moved a stable test by less than a point; the others did not move.
    expect((await column(4)).slice(1, 3)).toEqual(["+0.6", "0"]);
    expect(await page.locator("#row-count").textContent()).toBe(
      `showing ${STABLE.length + 1} of ${STABLE.length + 1} matching (${STABLE.length + 1} tests)`,
    );
  });

  it("sorts by a column on click, and reverses on a second click", async () => {
    const header = page.locator('#verdicts th[data-key="n"]');
    await header.click();
    expect(await header.getAttribute("aria-sort")).toBe("ascending");
    expect((await column(1)).slice(0, 2)).toEqual([REGRESSED, STABLE[0]]);
    await header.click();
    expect(await header.getAttribute("aria-sort")).toBe("descending");
    expect((await column(1))[0]).toBe(STABLE.at(-1));
    expect((await column(1)).at(-1)).toBe(REGRESSED);
  });

  it("filters by text and by having a first bad payload", async () => {
    await page.fill("#filter-text", "stable 1");
    expect((await column(1)).sort()).toEqual(STABLE.filter((name) => name.includes("stable 1")));
    expect(await page.locator("#row-count").textContent()).toBe(
      `showing 10 of 10 matching (${STABLE.length + 1} tests)`,
    );
    await page.fill("#filter-text", "");
    await page.check("#filter-first-bad");
    expect(await column(1)).toEqual([REGRESSED]);
    await page.uncheck("#filter-first-bad");
    expect(await page.locator("#verdicts tbody tr").count()).toBe(STABLE.length + 1);
  });

  it("charts another test when its row is clicked", async () => {
    await page.locator("#verdicts tbody tr", { hasText: STABLE[5]! }).click();
    expect(await page.locator("#chart-test-name").textContent()).toBe(STABLE[5]);
  });

  it("names the first bad payload with the components that changed in it, commits linked", async () => {
    const data = await pageData();
    expect(data.firstBad).toHaveLength(1);
    expect(data.firstBad[0]).toMatchObject({
      test: REGRESSED,
      index: BAD,
      release: data.payloads[BAD]!.release,
    });
    const row = page.locator("#first-bad tbody tr");
    expect(await row.locator("td").first().textContent()).toBe(REGRESSED);
    expect(
      await row.locator("li").evaluateAll((items) => items.map((li) => li.getAttribute("data-tag"))),
    ).toEqual(["cli", "ovn-kubernetes"]);
    expect(await row.locator('a:text("compare")').getAttribute("href")).toBe(
      `https://github.com/openshift/ovn-kubernetes/compare/${OLD_OVN}...${NEW_OVN}`,
    );
  });

  it("says what changed in each payload since the one before", async () => {
    const rows = page.locator("#payloads tbody tr");
    expect(await rows.count()).toBe(PAYLOADS);
    // Newest first; the oldest has nothing to compare with.
    expect(await rows.last().textContent()).toContain("nothing to compare with");
    expect(await rows.first().locator("li").allTextContents()).toEqual([
      "cli rebuilt at 333333333333 (new digest, same commit)",
    ]);
    const bad = page.locator(`#payloads tbody tr[data-index="${BAD}"] li[data-tag="ovn-kubernetes"]`);
    expect(await bad.textContent()).toBe(`ovn-kubernetes 111111111111 → 999999999999 (compare)`);
    expect(await bad.locator("a").first().getAttribute("href")).toBe(
      `https://github.com/openshift/ovn-kubernetes/commit/${OLD_OVN}`,
    );
  });
});

describe("netstress trends", () => {
  const env = () => ({
    PATH: process.env.PATH,
    APP_ID: "1",
    WEBHOOK_SECRET: "x",
    NETSTRESS_WORKERS: "false",
    NETSTRESS_REDIS_URL: inject("redisUrl"),
    NETSTRESS_QUEUE_PREFIX: prefix,
    NETSTRESS_DATA_DIR: dir.path,
    NETSTRESS_ALLOWED_REGISTRIES: registryServer.host,
    NETSTRESS_REGISTRY_ALLOW_LOOPBACK: "true",
  });

  it("prints as JSON exactly the data the page renders from", async () => {
    const result = await runNetstress(["trends", "--stream", STREAM, "--arch", "amd64", "-o", "json"], {
      env: env(),
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(await pageData());
  }, 60_000);

  it("prints a table: the first bad payload and its suspects, the tests that moved most, each payload's changes", async () => {
    const result = await runNetstress(["trends", "--stream", STREAM, "--arch", "amd64", "--limit", "3"], {
      env: env(),
    });
    expect(result.code).toBe(0);
    const data = await pageData();
    expect(result.stdout).toContain(
      `${STREAM} on amd64: ${PAYLOADS} payload(s), ${STABLE.length + 1} test(s)`,
    );
    expect(result.stdout).toContain(`    since ${data.payloads[BAD]!.release}:`);
    expect(result.stdout).toContain("    suspects: cli, ovn-kubernetes");
    expect(result.stdout).toContain(
      "  (false discovery rate 5% over the 1 test(s) that failed often enough to be flagged)",
    );
    expect(result.stdout).toMatch(
      /-20 +70% \(48\.1%–85\.5%\) of 20 +90% \(84\.8%–93\.6%\) of 180 +\[sig-network\] pods reach pods/,
    );
    expect(result.stdout).toContain(
      `${data.payloads[BAD]!.release}  2 run(s)  cli (rebuilt, same commit), ovn-kubernetes (https://github.com/openshift/ovn-kubernetes/compare/${OLD_OVN}...${NEW_OVN})`,
    );
  }, 60_000);

  it("refuses a stream or arch it cannot use, saying what would do", async () => {
    const bad = await runNetstress(["trends", "--stream", "no/such", "--arch", "amd64"], { env: env() });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--stream no/such: a release stream name");
    const arch = await runNetstress(["trends", "--stream", STREAM, "--arch", "sparc"], { env: env() });
    expect(arch.code).toBe(2);
    expect(arch.stderr).toMatch(/sparc/);
  }, 60_000);
});

describe("the trend route", () => {
  it("answers a stream without history with 404 and a bad stream or arch with 400, saying why", async () => {
    const base = pageUrl.replace(/\/streams\/.*/, "");
    const none = await fetch(`${base}/streams/4.99.0-0.nightly/amd64`);
    expect(none.status).toBe(404);
    expect(await none.text()).toContain("no payload of 4.99.0-0.nightly on amd64 in the history yet");
    const arch = await fetch(`${base}/streams/${STREAM}/sparc`);
    expect(arch.status).toBe(400);
    expect(await arch.text()).toContain('"sparc" is not an arch');
    const page = await fetch(pageUrl);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
  });
});
