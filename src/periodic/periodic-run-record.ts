import { createHash } from "node:crypto";
import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Periodic } from "../config/periodics-config.ts";
import type { LatestRelease } from "../payload/release-controller.ts";
import { queuedRun } from "../runs/queued-run.ts";
import type { PeriodicRun } from "../runs/run-record.ts";

/**
 * The run of one periodic on one arch for one payload. Its id derives from the three, so a payload
 * already stressed is never stressed again: a second fire (another replica, a restart, the same
 * nightly still newest) finds the run it made.
 */
export function periodicRunRecord(input: {
  periodic: Periodic;
  arch: Arch;
  release: LatestRelease;
  now: Date;
}): PeriodicRun {
  const { periodic, arch, release } = input;
  const id = createHash("sha256")
    .update(`periodic\0${periodic.name}\0${arch}\0${release.pullSpec}`)
    .digest("hex")
    .slice(0, 32);
  return queuedRun<PeriodicRun>(
    {
      id,
      subject: {
        kind: "periodic",
        periodic: periodic.name,
        stream: periodic.stream,
        release: release.name,
        payload: release.pullSpec,
      },
      arch,
      options: {
        iterations: periodic.iterations,
        // The payload against the stream's pool; its own results join the pool afterwards.
        baseline: "history",
        ...(periodic.focus ? { focus: periodic.focus } : {}),
        ...(periodic.suite ? { suite: periodic.suite } : {}),
      },
      source: {
        tags: [],
        payload: release.pullSpec,
        releaseStream: periodic.stream,
        parallel: periodic.parallel,
        timeoutMinutes: periodic.timeout_minutes,
        imageWaitMinutes: 0,
      },
      dedupeKey: `periodic:${id}`,
    },
    input.now,
  );
}
