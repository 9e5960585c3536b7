import { ExtError } from "./ext-error.ts";
import { createHttpCheck } from "./http-check.ts";
import type { ProbeLine } from "./probe-line.ts";
import { probeTargetsSchema, type ProbeTarget } from "./probe-target.ts";
import { runChecker } from "./run-checker.ts";
import { startProbeServer } from "./start-probe-server.ts";

/**
 * `probe-server`: what a probe pod runs. It serves /healthz on `port` and, given targets, probes
 * them every interval, printing a JSON line per state change (the extension reads the pod log).
 * SIGTERM stops it: probes in flight settle, `stopped` is printed, and it resolves.
 */
export async function runProbeServer(options: {
  port: number;
  name: string;
  targetsJson: string | undefined;
  intervalMs: number;
  timeoutMs: number;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  write: (line: string) => void;
}): Promise<void> {
  let targets: ProbeTarget[] = [];
  if (options.targetsJson) {
    let value: unknown;
    try {
      value = JSON.parse(options.targetsJson);
    } catch (cause) {
      throw new ExtError(`--targets is not JSON: ${(cause as Error).message}`, { code: "ext-usage", cause });
    }
    const parsed = probeTargetsSchema.safeParse(value);
    if (!parsed.success) {
      throw new ExtError(
        `--targets: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
        { code: "ext-usage" },
      );
    }
    targets = parsed.data;
  }
  const emit = (line: ProbeLine) => options.write(JSON.stringify(line));
  const server = await startProbeServer({ port: options.port, name: options.name });
  emit({ netstress: "probe", event: "listening", port: server.port, at: new Date().toISOString() });
  const check = createHttpCheck({ env: options.env });
  try {
    if (targets.length > 0) {
      await runChecker({
        targets,
        source: options.name,
        intervalMs: options.intervalMs,
        timeoutMs: options.timeoutMs,
        check,
        emit,
        signal: options.signal,
      });
    } else if (!options.signal.aborted) {
      await new Promise<void>((resolve) =>
        options.signal.addEventListener("abort", () => resolve(), { once: true }),
      );
    }
  } finally {
    check.close();
    await server.close();
    emit({ netstress: "probe", event: "stopped", at: new Date().toISOString() });
  }
}
