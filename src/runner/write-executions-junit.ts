import { createWriteStream } from "node:fs";
import { once } from "node:events";
import {
  JUNIT_FOOTER,
  JUNIT_HEADER,
  JUNIT_SUITE_CLOSE,
  renderJunitSuiteOpen,
  renderJunitTestcase,
  type JunitSuiteCounts,
} from "../ote/junit-xml.ts";
import { readResultRecords } from "./read-result-records.ts";
import type { Arm, ResultRecord } from "./result-record.ts";

/**
 * junit.xml of a run: one <testsuite> per arm, one <testcase> per execution (iteration and
 * attempt in the name, so CI viewers show every execution). Streams results.jsonl once per arm, so
 * memory stays flat however long the run.
 */
export async function writeExecutionsJunit(options: {
  resultsPath: string;
  junitPath: string;
  arch: string;
}): Promise<void> {
  const counts = new Map<Arm, JunitSuiteCounts>();
  for await (const record of readResultRecords(options.resultsPath)) {
    const suite = counts.get(record.arm) ?? {
      name: `network-stress ${record.arm} (${options.arch})`,
      tests: 0,
      failures: 0,
      skipped: 0,
      time: 0,
    };
    suite.tests += 1;
    if (record.result === "failed") suite.failures += 1;
    if (record.result === "skipped") suite.skipped += 1;
    suite.time += record.duration / 1000;
    counts.set(record.arm, suite);
  }

  const out = createWriteStream(options.junitPath);
  const write = async (text: string): Promise<void> => {
    if (!out.write(text)) await once(out, "drain");
  };
  await write(JUNIT_HEADER);
  for (const [arm, suite] of counts) {
    await write(renderJunitSuiteOpen(suite));
    for await (const record of readResultRecords(options.resultsPath)) {
      if (record.arm === arm) await write(renderJunitTestcase(toTestcase(record)));
    }
    await write(JUNIT_SUITE_CLOSE);
  }
  await write(JUNIT_FOOTER);
  out.end();
  await once(out, "finish");
}

function toTestcase(record: ResultRecord) {
  const retry = record.attempt > 0 ? ` retry ${record.attempt}` : "";
  return {
    name: `${record.name} [iteration ${record.iteration}${retry}]`,
    classname: `${record.arm}.${record.component}`,
    time: record.duration / 1000,
    ...(record.result === "failed"
      ? { failure: { message: record.error ?? "failed", body: record.output } }
      : {}),
    ...(record.result === "skipped" ? { skipped: { message: record.output || undefined } } : {}),
  };
}
