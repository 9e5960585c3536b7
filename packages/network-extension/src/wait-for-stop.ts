import { access } from "node:fs/promises";

export type StopReason = "stop-file" | "duration" | "signal";

/**
 * How an invariant test knows its iteration is over: the runner creates the file named by
 * NETSTRESS_INVARIANT_STOP_FILE once every other test has finished; without that variable (run by
 * origin, or by hand) it ends after NETSTRESS_INVARIANT_DURATION_SECONDS (default 60). SIGTERM
 * (`signal`) ends it either way.
 */
export async function waitForStop(options: {
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  pollMs?: number;
  exists?: (path: string) => Promise<boolean>;
}): Promise<StopReason> {
  const { env, signal, pollMs = 250 } = options;
  const exists =
    options.exists ??
    ((path: string) =>
      access(path).then(
        () => true,
        () => false,
      ));
  const stopFile = env.NETSTRESS_INVARIANT_STOP_FILE;
  const durationMs = stopFile ? Infinity : invariantDurationSeconds(env) * 1000;
  const deadline = Date.now() + durationMs;
  return new Promise<StopReason>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const finish = (reason: StopReason) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(reason);
    };
    const onAbort = () => finish("signal");
    if (signal.aborted) return finish("signal");
    signal.addEventListener("abort", onAbort, { once: true });
    const tick = async () => {
      if (stopFile && (await exists(stopFile))) return finish("stop-file");
      if (Date.now() >= deadline) return finish("duration");
      if (!signal.aborted)
        timer = setTimeout(() => void tick(), Math.min(pollMs, Math.max(0, deadline - Date.now())));
    };
    void tick();
  });
}

/** NETSTRESS_INVARIANT_DURATION_SECONDS, default 60. */
export function invariantDurationSeconds(env: NodeJS.ProcessEnv): number {
  const raw = env.NETSTRESS_INVARIANT_DURATION_SECONDS;
  const value = raw === undefined || raw === "" ? 60 : Number(raw);
  return Number.isFinite(value) && value > 0 ? value : 60;
}
