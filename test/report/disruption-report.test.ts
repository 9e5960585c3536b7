import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analyzeRun, type AnalyzeRunResult } from "../../src/report/analyze-run.ts";
import { CHECK_RUN_LIMITS } from "../../src/report/check-run-output.ts";
import { analysisSummarySchema } from "../../src/report/summary-json.ts";
import type { Disruption } from "@netstress/core/model/disruption-schema.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";
import { makeRecord } from "../analysis/make-records.ts";
import { launchChromium } from "../helpers/launch-chromium.ts";

const TEST = "[sig-network][Disruptive][Serial] node agent restart should keep <paths> reachable";
const START = Date.parse("2025-03-01T10:00:00Z");

/** The PR agent's restart bug: 2 s more on the cross-node path, every PR iteration; the baseline now and then. */
function records(): ResultRecord[] {
  const out: ResultRecord[] = [];
  for (const arm of ["pr", "baseline"] as const) {
    for (let iteration = 0; iteration < 12; iteration++) {
      const started = START + iteration * 600_000;
      const cross = (arm === "pr" ? 2 : 0) + (iteration % 5 === 1 ? 3 : 0);
      const entry = (path: string, connection: "new" | "reused", seconds: number): Disruption => ({
        path,
        connection,
        observedSeconds: 120,
        disruptedSeconds: seconds,
        budgetSeconds: 3,
        intervals:
          seconds > 0
            ? [
                {
                  from: new Date(started + 30_000).toISOString(),
                  to: new Date(started + 30_000 + seconds * 1000).toISOString(),
                  reason: "dial tcp: i/o timeout",
                  source: "node-1",
                  target: "node-2",
                },
              ]
            : [],
      });
      out.push(
        makeRecord({
          name: TEST,
          arm,
          iteration,
          component: "netstress",
          cluster: `${arm}-${iteration % 4}`,
          startTime: new Date(started).toISOString().replace("T", " ").replace("Z", "000 UTC"),
          disruption: [
            entry("pod-to-pod-cross-node", "new", cross),
            entry("pod-to-pod-cross-node", "reused", cross),
            entry("pod-to-service", "new", iteration === 3 ? 1 : 0),
          ],
        }),
      );
    }
  }
  return out;
}

let dir: string;
let result: AnalyzeRunResult;
let browser: Browser | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "netstress-disruption-"));
  await mkdir(join(dir, "run"));
  await writeFile(
    join(dir, "run", "results.jsonl"),
    records()
      .map((r) => JSON.stringify(r))
      .join("\n"),
  );
  result = await analyzeRun({ pr: join(dir, "run"), outDir: join(dir, "out") });
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("disruption in the reports", () => {
  it("fails the check run and names the disrupted paths, within GitHub's limits", () => {
    expect(result.conclusion).toBe("failure");
    expect(result.checkRun.title).toMatch(/^2 disrupted paths — /);
    const summary = result.checkRun.summary;
    expect(summary.length).toBeLessThanOrEqual(CHECK_RUN_LIMITS.summary);
    expect(summary).toContain("disrupted significantly longer than the baseline");
    expect(summary).toContain(
      "**Disruption** (per test, path and connection): 2 regression(s) · 0 inconclusive · 1 stable",
    );
    expect(summary).toMatch(
      /\| regression \| .*node agent restart.* \| pod-to-pod-cross-node new \| P50 2 s, P99 5 s \(max of 12\) \| P50 0 s, P99 3 s \(max of 12\) \|/,
    );
    expect(summary).toContain("one-sided rank test on clusters");
  });

  it("puts every row in summary.json, in its schema", async () => {
    const summary = analysisSummarySchema.parse(JSON.parse(await readFile(result.paths.summaryJson, "utf8")));
    expect(summary.disruption?.unit).toBe("cluster");
    expect(summary.disruption?.rows.map((row) => [row.path, row.connection, row.verdict])).toEqual([
      ["pod-to-pod-cross-node", "new", "regression"],
      ["pod-to-pod-cross-node", "reused", "regression"],
      ["pod-to-service", "new", "stable"],
    ]);
    expect(summary.disruption?.rows[0]!.pr).toMatchObject({
      samples: 12,
      clusters: 4,
      p99IsMax: true,
      overBudget: 3,
    });
  });

  it("shows the per-path table escaped, and draws the timeline in Chromium", async () => {
    const html = await readFile(result.paths.html, "utf8");
    expect(html).toContain('<table class="plan" id="disruption-table">');
    expect(html).toContain("node agent restart should keep &lt;paths&gt; reachable");
    expect(html).not.toContain("keep <paths>");
    browser = await launchChromium();
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    await page.goto(pathToFileURL(result.paths.html).href);
    await page.waitForSelector("#disruption-chart-0");
    const chart = (await page.evaluate(`(() => {
      const canvas = document.getElementById("disruption-chart-0");
      const chart = Chart.getChart(canvas);
      const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
      let red = 0;
      for (let i = 0; i < pixels.length; i += 4) if (pixels[i] > 150 && pixels[i + 1] < 80 && pixels[i + 2] < 80) red++;
      return {
        height: canvas.height,
        rows: chart.data.labels.length,
        series: chart.data.datasets.map((d) => d.label + ":" + d.data.length),
        first: chart.data.datasets[0].data[0],
        red,
      };
    })()`)) as {
      height: number;
      rows: number;
      series: string[];
      first: { y: string; x: number[] };
      red: number;
    };
    expect(problems).toEqual([]);
    // Every PR iteration saw an interval, and 4 baseline iterations did.
    expect(chart.rows).toBe(16);
    expect(chart.series).toEqual([
      "pod-to-pod-cross-node new:15",
      "pod-to-pod-cross-node reused:15",
      "pod-to-service new:2",
    ]);
    expect(chart.first).toMatchObject({ y: "PR #0 pr-0", x: [30, 32] });
    // The first path's colour is on the canvas: the bars were drawn.
    expect(chart.red).toBeGreaterThan(200);
  }, 30_000);
});
