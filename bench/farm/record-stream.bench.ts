/**
 * What reading one pod's log costs the collector: 10,000 records (outputs of about 200 bytes, as a
 * long shard's pod writes them) and a 1 MiB artifact file, parsed unsigned (the /v1 protocol) and
 * signed and verified with the Job's key (/v2); and what signing costs the runner. Medians of 15
 * rounds after 3 warm-ups.
 *
 *   node --import tsx bench/farm/record-stream.bench.ts
 */
import { randomBytes } from "node:crypto";
import { deriveStreamKey } from "../../src/farm/derive-stream-key.ts";
import {
  createStreamSigner,
  formatFileLines,
  formatRecordLine,
  formatStreamTrailer,
  parseRecordStream,
} from "../../src/farm/record-stream.ts";
import type { ResultRecord } from "@netstress/core/model/result-record.ts";

const RECORDS = 10_000;
const ROUNDS = 15;
const record = (i: number): ResultRecord => ({
  name: `[sig-network] [Feature:Stress] networking test number ${i % 500} keeps working [Suite:openshift/conformance/parallel]`,
  lifecycle: "blocking",
  duration: 1200 + (i % 97),
  result: i % 50 === 0 ? "failed" : "passed",
  output: i % 50 === 0 ? "x".repeat(200) : "",
  arm: i % 2 === 0 ? "pr" : "baseline",
  arch: "amd64",
  iteration: 0,
  attempt: 0,
  component: "ovn-kubernetes",
});
const lines = [
  ...Array.from({ length: RECORDS }, (_, i) => formatRecordLine(i, record(i))),
  ...formatFileLines({
    firstSequence: 0,
    arm: "pr",
    component: "ovn-kubernetes",
    path: "flows.txt",
    content: randomBytes(1024 * 1024),
  }),
  formatStreamTrailer(RECORDS, "completed"),
];
const key = deriveStreamKey("bench secret", { cluster: "build01", namespace: "netstress", job: "nst-bench" });
const unsigned = lines.join("");
const signed = lines.map(createStreamSigner(key)).join("");

const median = (action: () => unknown): number => {
  const times: number[] = [];
  for (let round = 0; round < ROUNDS + 3; round++) {
    const start = performance.now();
    action();
    if (round >= 3) times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
};
const check = (parsed: ReturnType<typeof parseRecordStream>) => {
  if (!parsed.complete || parsed.records.length !== RECORDS)
    throw new Error(`not whole: ${JSON.stringify(parsed)}`);
};
check(parseRecordStream(unsigned));
check(parseRecordStream(signed, { key }));
const mib = (text: string) => (Buffer.byteLength(text) / 2 ** 20).toFixed(1);
console.log(`${RECORDS} records + 1 MiB file: unsigned log ${mib(unsigned)} MiB, signed ${mib(signed)} MiB`);
console.log(`parse unsigned:           ${median(() => parseRecordStream(unsigned)).toFixed(1)} ms`);
console.log(`parse signed, verified:   ${median(() => parseRecordStream(signed, { key })).toFixed(1)} ms`);
console.log(`sign (runner, all lines): ${median(() => lines.map(createStreamSigner(key))).toFixed(1)} ms`);
