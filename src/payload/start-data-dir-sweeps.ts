import type { Logger } from "pino";
import { sweepDataDir, type SweepDataDirOptions } from "./sweep-data-dir.ts";

export interface DataDirSweeps {
  /** Stops sweeping; resolves once a sweep under way is done. */
  stop(): Promise<void>;
}

/**
 * Sweeps the data directory (sweepDataDir) soon after start and then every `intervalMs`, one
 * sweep at a time. A failed sweep is logged and the next one tries again.
 */
export function startDataDirSweeps(
  options: SweepDataDirOptions & { intervalMs?: number; firstAfterMs?: number; logger: Logger },
): DataDirSweeps {
  const { logger, intervalMs = 60 * 60_000, firstAfterMs = 60_000 } = options;
  let running: Promise<void> | undefined;
  let stopped = false;
  const sweep = () => {
    if (running || stopped) return;
    running = sweepDataDir(options)
      .then(
        (report) =>
          logger.info(
            {
              removedRuns: report.removedRuns.length,
              keptActiveRuns: report.keptActiveRuns.length,
              removedBinaries: report.removedBinaries,
              freedBytes: report.freedBytes,
              durationMs: report.durationMs,
            },
            "data directory swept",
          ),
        (error: unknown) => logger.error({ err: error }, "sweeping the data directory failed"),
      )
      .finally(() => (running = undefined));
  };
  const first = setTimeout(sweep, firstAfterMs);
  const every = setInterval(sweep, intervalMs);
  first.unref();
  every.unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(every);
      await running;
    },
  };
}
