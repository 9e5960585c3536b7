import { describe, expect, it } from "vitest";
import { judgeTests } from "../../src/analysis/judge-tests.ts";
import { createResultsAggregator } from "../../src/analysis/results-aggregator.ts";
import { jsonForScript, renderHtmlReport } from "../../src/report/html-report.ts";
import type { ReportContext } from "../../src/report/report-context.ts";
import { emptyInputReport } from "../../src/report/read-results.ts";
import { armRecords } from "../analysis/make-records.ts";

const assets = { chartJs: "/* chart */", clientScript: "/* client */", styles: "body{}" };

function contextWith(name: string, component: string): ReportContext {
  const aggregator = createResultsAggregator();
  for (const record of [
    ...armRecords({ name, arm: "pr", runs: 6, failed: 1, component }),
    ...armRecords({ name, arm: "baseline", runs: 6, component }),
  ])
    aggregator.add(record);
  return {
    analysis: judgeTests({ run: aggregator.finish() }),
    input: { ...emptyInputReport(), records: 12, duplicates: 0 },
    plan: {
      manifest: {
        status: "completed",
        arch: "amd64",
        seed: "s",
        iterations: 6,
        firstIteration: 0,
        parallel: 1,
        retries: 1,
        timeoutMs: 1000,
        startedAt: "then",
        components: [{ arm: "pr", component, binary: "/bin/x", sha256: "00", tests: 1 }],
      },
    },
    generatedAt: "now",
  };
}

describe("HTML report markup", () => {
  it("keeps data inside its script block whatever a test name holds", () => {
    const hostile = "</script><script>alert(1)</script>\u2028";
    const text = jsonForScript({ name: hostile });
    expect(text).not.toMatch(/<\/?script/i);
    expect(JSON.parse(text)).toEqual({ name: hostile });
  });

  it("escapes names in the static parts and references nothing outside the file", () => {
    const html = renderHtmlReport({
      context: contextWith("t <b>bold</b>", `<img src=x onerror=alert(1)>`),
      assets,
    });
    expect(html).not.toContain("<img src=x");
    expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(html).not.toMatch(/\b(src|href)=["']?(https?:)?\/\//);
    expect(html).toContain("default-src 'none'");
  });
});
