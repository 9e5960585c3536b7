import { closeSync, createReadStream, createWriteStream, openSync } from "node:fs";
import { once } from "node:events";
import { rm } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import {
  JUNIT_FOOTER,
  JUNIT_HEADER,
  JUNIT_SUITE_CLOSE,
  renderJunitSuiteOpen,
  renderJunitTestcase,
  type JunitSuiteCounts,
} from "../ote/junit-xml.ts";
import type { Arm, ResultRecord } from "@netstress/core/model/result-record.ts";
import { writeAllSync } from "./write-all-sync.ts";

interface ArmSuite {
  counts: JunitSuiteCounts;
  part: string;
  fd: number | undefined;
  /** Testcases not yet in the part file: they go in writes of about PART_WRITE_CHARS. */
  unwritten: string;
}

/** A crash loses junit.xml anyway (it is written at the end), so parts are written in batches. */
const PART_WRITE_CHARS = 64 * 1024;

/**
 * junit.xml of a run, built as its records are made: one <testsuite> per arm, one <testcase> per
 * execution (iteration and attempt in the name, so CI viewers show every execution). Each record's
 * testcase goes to its arm's part file beside junit.xml at once, and the suite's counts are kept,
 * so the end of a run only joins the parts: memory stays flat however long the run, and
 * results.jsonl is not read back.
 */
export class ExecutionsJunit {
  private readonly suites = new Map<Arm, ArmSuite>();

  constructor(private readonly options: { junitPath: string; arch: string }) {}

  add(record: ResultRecord): void {
    let suite = this.suites.get(record.arm);
    if (!suite) {
      const part = `${this.options.junitPath}.${record.arm}.part`;
      suite = {
        counts: {
          name: `network-stress ${record.arm} (${this.options.arch})`,
          tests: 0,
          failures: 0,
          skipped: 0,
          time: 0,
        },
        part,
        fd: openSync(part, "w"),
        unwritten: "",
      };
      this.suites.set(record.arm, suite);
    }
    suite.counts.tests += 1;
    if (record.result === "failed") suite.counts.failures += 1;
    if (record.result === "skipped") suite.counts.skipped += 1;
    suite.counts.time += record.duration / 1000;
    suite.unwritten += renderJunitTestcase(toTestcase(record));
    if (suite.unwritten.length >= PART_WRITE_CHARS) writeUnwritten(suite);
  }

  /** Writes junit.xml from what was added, and removes the parts. */
  async finish(): Promise<void> {
    for (const suite of this.suites.values()) writeUnwritten(suite);
    this.closeParts();
    const out = createWriteStream(this.options.junitPath);
    out.write(JUNIT_HEADER);
    for (const suite of this.suites.values()) {
      out.write(renderJunitSuiteOpen(suite.counts));
      await pipeline(createReadStream(suite.part), out, { end: false });
      out.write(JUNIT_SUITE_CLOSE);
    }
    out.end(JUNIT_FOOTER);
    await once(out, "finish");
    await this.discard();
  }

  /** Removes the parts without writing junit.xml (a run that failed has none). */
  async discard(): Promise<void> {
    this.closeParts();
    await Promise.all([...this.suites.values()].map((s) => rm(s.part, { force: true })));
  }

  private closeParts(): void {
    for (const suite of this.suites.values()) {
      if (suite.fd !== undefined) closeSync(suite.fd);
      suite.fd = undefined;
    }
  }
}

function writeUnwritten(suite: ArmSuite): void {
  if (suite.unwritten === "" || suite.fd === undefined) return;
  writeAllSync(suite.fd, suite.unwritten);
  suite.unwritten = "";
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
