import { setMaxListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import type { ProbeLine } from "./probe-line.ts";
import type { ProbeTarget } from "./probe-target.ts";

export type CheckOutcome = { ok: true } | { ok: false; reason: string };
/** One probe of a target; it must settle by the time `signal` aborts (the probe's timeout). */
export type CheckTarget = (target: ProbeTarget, signal: AbortSignal) => Promise<CheckOutcome>;

/**
 * The checker loop of a probe pod: every `intervalMs` each target is probed once (a probe still
 * in flight delays that target's next one, never piles up), bounded by `timeoutMs`, and a `state`
 * line is emitted for a target's first outcome and for every change between reachable and failing.
 * Resolves once `signal` aborts and every probe in flight has settled.
 */
export async function runChecker(options: {
  targets: readonly ProbeTarget[];
  source: string;
  intervalMs: number;
  timeoutMs: number;
  check: CheckTarget;
  emit: (line: ProbeLine) => void;
  signal: AbortSignal;
  now?: () => Date;
}): Promise<void> {
  const { signal, now = () => new Date() } = options;
  // Every target's loop waits on this one signal at once.
  setMaxListeners(0, signal);
  options.emit({
    netstress: "probe",
    event: "checking",
    targets: options.targets.length,
    at: now().toISOString(),
  });
  // Resolves early, never rejects, when the signal aborts: the loops check it themselves.
  const pause = (ms: number) => sleep(Math.max(0, ms), undefined, { signal }).catch(() => undefined);
  const loop = async (target: ProbeTarget, offsetMs: number) => {
    let last: boolean | undefined;
    await pause(offsetMs);
    while (!signal.aborted) {
      const started = now();
      const timeout = AbortSignal.timeout(options.timeoutMs);
      let outcome: CheckOutcome;
      try {
        outcome = await options.check(target, timeout);
      } catch (error) {
        outcome = { ok: false, reason: error instanceof Error ? error.message : String(error) };
      }
      // A probe cut short because the checker is stopping says nothing about the path.
      if (signal.aborted && !outcome.ok) break;
      if (outcome.ok !== last) {
        last = outcome.ok;
        options.emit({
          netstress: "probe",
          event: "state",
          path: target.path,
          connection: target.connection,
          source: options.source,
          target: target.name,
          ok: outcome.ok,
          ...(outcome.ok ? {} : { reason: outcome.reason }),
          at: started.toISOString(),
        });
      }
      await pause(options.intervalMs - (now().getTime() - started.getTime()));
    }
  };
  // Spread the targets' probes over the interval, so a pod's probes do not all leave at once.
  const count = options.targets.length;
  await Promise.all(
    options.targets.map((target, i) =>
      loop(target, Math.floor((i * options.intervalMs) / Math.max(count, 1))),
    ),
  );
}
