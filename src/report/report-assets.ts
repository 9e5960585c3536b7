import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { ReportAssets } from "./html-report.ts";

/** Chart.js's UMD build as the installed package ships it (its exports map hides the dist path). */
export function chartJsPath(): string {
  const entry = createRequire(import.meta.url).resolve("chart.js");
  return join(dirname(entry), "chart.umd.min.js");
}

let cached: Promise<ReportAssets> | undefined;

/** A page's own script after the test-table controls it builds on (table-controls.js). */
export async function readClientScript(name: string): Promise<string> {
  const [controls, own] = await Promise.all([
    readFile(new URL("./table-controls.js", import.meta.url), "utf8"),
    readFile(new URL(name, import.meta.url), "utf8"),
  ]);
  return `${controls}\n${own}`;
}

/** Reads the report's browser assets once per process. */
export function loadReportAssets(): Promise<ReportAssets> {
  cached ??= Promise.all([
    readFile(chartJsPath(), "utf8"),
    readClientScript("./html-report-client.js"),
    readFile(new URL("./html-report.css", import.meta.url), "utf8"),
  ]).then(([chartJs, clientScript, styles]) => ({ chartJs, clientScript, styles }));
  return cached;
}
