import { join } from "node:path";
import { writeSampleBinary } from "@netstress/testbed/sample-ext/build-sample-binaries.ts";
import type { SampleTest } from "@netstress/testbed/sample-ext/suites.ts";

export const ADVERSARIAL = {
  passes: "[sig-network] adversarial passes",
  fails: "[sig-network] adversarial always fails",
  crash: "[sig-network] adversarial crashes",
  hang: "[sig-network] adversarial hangs",
  garbage: "[sig-network] adversarial prints half a JSON line",
  noResult: "[sig-network] adversarial exits without a result",
  flood: "[sig-network] adversarial floods stdout",
  malformed: "[sig-network] adversarial reports a malformed result",
  informing: "[sig-network] adversarial informing always fails",
} as const;

/** An OTE binary whose tests misbehave in every way the runner must survive. */
export function writeAdversarialBinary(dir: string, options: { floodMiB?: number } = {}): Promise<string> {
  const tests: SampleTest[] = [
    { name: ADVERSARIAL.passes, durationMs: [1, 5] },
    { name: ADVERSARIAL.fails, failureProbability: 1, durationMs: [1, 5], failureError: "always" },
    { name: ADVERSARIAL.crash, behavior: "crash" },
    { name: ADVERSARIAL.hang, behavior: "hang" },
    { name: ADVERSARIAL.garbage, behavior: "garbage" },
    { name: ADVERSARIAL.noResult, behavior: "no-result" },
    { name: ADVERSARIAL.flood, behavior: "flood", floodMiB: options.floodMiB ?? 64 },
    { name: ADVERSARIAL.malformed, behavior: "malformed" },
    { name: ADVERSARIAL.informing, lifecycle: "informing", failureProbability: 1, durationMs: [1, 5] },
  ];
  return writeSampleBinary({
    suite: { component: "adversarial", commit: "0".repeat(40), buildDate: "2026-01-01T00:00:00Z", tests },
    path: join(dir, "adversarial-tests-ext"),
  });
}
