import { readFile } from "node:fs/promises";
import type { ReportAssets } from "./html-report.ts";
import { chartJsPath, readClientScript } from "./report-assets.ts";

let cached: Promise<ReportAssets> | undefined;

/** Reads the trend page's browser assets once per process: the report's Chart.js and styles, and its own. */
export function loadTrendPageAssets(): Promise<ReportAssets> {
  cached ??= Promise.all([
    readFile(chartJsPath(), "utf8"),
    readClientScript("./trend-page-client.js"),
    readFile(new URL("./html-report.css", import.meta.url), "utf8"),
    readFile(new URL("./trend-page.css", import.meta.url), "utf8"),
  ]).then(([chartJs, clientScript, reportStyles, styles]) => ({
    chartJs,
    clientScript,
    styles: `${reportStyles}\n${styles}`,
  }));
  return cached;
}
