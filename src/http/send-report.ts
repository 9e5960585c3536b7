import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isWithin } from "@netstress/core/model/is-within.ts";
import { REPORT_POLICY, send } from "./send.ts";

/**
 * Answers with a run's HTML report, when it exists and lies under the data directory (a path from
 * Redis names no other file, whatever Redis says). False when there is nothing to serve.
 */
export async function sendReport(
  res: ServerResponse<IncomingMessage>,
  input: { dataDir: string; reportPath: string | undefined },
): Promise<boolean> {
  if (!input.reportPath) return false;
  const path = resolve(input.reportPath);
  if (!isWithin(input.dataDir, path)) return false;
  const report = await readFile(path).catch(() => undefined);
  if (!report) return false;
  return send(res, 200, "text/html; charset=utf-8", report, { "content-security-policy": REPORT_POLICY });
}
