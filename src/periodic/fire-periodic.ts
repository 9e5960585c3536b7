import type { Logger } from "pino";
import type { Periodic } from "../config/periodics-config.ts";
import type { ReleaseController } from "../payload/release-controller.ts";
import { acceptRun } from "../queue/accept-run.ts";
import type { RunDeps } from "../queue/run-deps.ts";
import { periodicRunRecord } from "./periodic-run-record.ts";

/**
 * One fire of a periodic: asks the release-controller for the stream's newest payload and accepts
 * a run of it per arch — unless that payload was already stressed, in which case nothing happens.
 * Returns the ids of the runs it started.
 */
export async function firePeriodic(
  deps: { runs: RunDeps; releaseController: ReleaseController; log: Logger; now?: () => Date },
  periodic: Periodic,
): Promise<string[]> {
  const release = await deps.releaseController.latest(periodic.stream);
  const started: string[] = [];
  for (const arch of periodic.arches) {
    const record = periodicRunRecord({ periodic, arch, release, now: (deps.now ?? (() => new Date()))() });
    // Accepting an existing run again would queue it again: a stressed payload is left alone.
    if (await deps.runs.store.get(record.id)) continue;
    if ((await acceptRun(deps.runs, record)).created) started.push(record.id);
  }
  deps.log.info(
    { periodic: periodic.name, release: release.name, started: started.length },
    started.length > 0 ? "periodic started runs" : "periodic skipped a payload it already stressed",
  );
  return started;
}
