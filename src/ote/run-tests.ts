import type { BinarySandbox } from "./binary-sandbox.ts";
import { capText } from "./cap-text.ts";
import { describeExit } from "./describe-exit.ts";
import { formatOteTimestamp } from "@netstress/core/model/format-ote-timestamp.ts";
import { invokeBinary, type InvokeBinaryOptions, type InvokeBinaryOutcome } from "./invoke-binary.ts";
import { normalizeDuration } from "./normalize-duration.ts";
import { parseRunTestOutput } from "./parse-run-test-output.ts";
import type { StartProcess } from "./start-process.ts";
import type { HarnessError, Lifecycle } from "@netstress/core/model/ote-result-fields.ts";
import type { OteResult } from "./schemas.ts";

/** `harnessError`: why the harness, not the test, decided the result; absent when the binary reported it. */
export type TestOutcome = OteResult & { harnessError?: HarnessError };

export const NO_RESULT_ERROR = "binary did not produce a result for this test";

/** Largest `output` kept per result; the head and tail survive. */
export const MAX_OUTPUT_CHARS = 64 * 1024;

export interface RunTestsOptions {
  binary: string;
  names: readonly string[];
  /** Lifecycle per name from `list`, used when the binary gives no result of its own. */
  lifecycles?: ReadonlyMap<string, Lifecycle>;
  timeoutMs: number;
  /** After the interrupt at the timeout (or on abort), how long before SIGABRT; see invokeBinary. */
  interruptGraceMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Variables of this invocation alone, on top of `env`. */
  extraEnv?: Readonly<Record<string, string>>;
  sandbox?: BinarySandbox;
  signal?: AbortSignal;
  invoke?: (options: InvokeBinaryOptions) => Promise<InvokeBinaryOutcome>;
  /** How the binary is started (see invokeBinary). */
  start?: StartProcess;
}

export interface RunTestsResult {
  outcomes: TestOutcome[];
  /** The invocation was cancelled: outcomes without a reported result are not test failures. */
  aborted: boolean;
}

/**
 * `<bin> run-test -n NAME … -o jsonl`. Returns exactly one outcome per requested name, in order:
 * a missing, malformed or killed result becomes a failure that says why, and so does every
 * requested test of an invocation that also reported a test nobody asked for (origin's
 * "unexpected result": the binary renamed or mixed up its tests). Durations are milliseconds.
 */
export async function runTests(options: RunTestsOptions): Promise<RunTestsResult> {
  const { invoke = invokeBinary } = options;
  const startTime = new Date();
  const args = ["run-test", ...options.names.flatMap((n) => ["-n", n]), "-o", "jsonl"];
  const outcome = await invoke({
    binary: options.binary,
    args,
    timeoutMs: options.timeoutMs,
    ...(options.interruptGraceMs !== undefined ? { interruptGraceMs: options.interruptGraceMs } : {}),
    env: options.env,
    ...(options.extraEnv ? { extraEnv: options.extraEnv } : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    signal: options.signal,
    ...(options.start ? { start: options.start } : {}),
  });
  const endTime = new Date();
  const parsed = parseRunTestOutput(outcome.lines);
  const exit = describeExit(outcome, options.timeoutMs);
  // The binary's log noise is only the output of a result the harness decides.
  const noise = () =>
    [
      ...parsed.noise,
      ...(outcome.stderrTail ? ["--- stderr (tail) ---", outcome.stderrTail] : []),
      ...(outcome.droppedBytes > 0 ? [`[${outcome.droppedBytes} bytes of output dropped]`] : []),
    ].join("\n");

  const harnessFailure = (name: string, harnessError: HarnessError, error: string): TestOutcome => ({
    name,
    lifecycle: options.lifecycles?.get(name) ?? "blocking",
    duration: Math.round(outcome.durationMs),
    startTime: formatOteTimestamp(startTime),
    endTime: formatOteTimestamp(endTime),
    result: "failed",
    output: capText(noise(), MAX_OUTPUT_CHARS),
    error,
    harnessError,
  });

  // A name list of one, usually: searched rather than put in a set.
  const unexpected = [...parsed.results.keys()].filter((n) => !options.names.includes(n));
  const outcomes = options.names.map((name): TestOutcome => {
    if (unexpected.length > 0) {
      return harnessFailure(
        name,
        "unexpected-result",
        `test binary returned unexpected result: ${JSON.stringify(unexpected[0])} was not requested` +
          (parsed.results.has(name) ? "" : `, and "${name}" got no result`),
      );
    }
    const reported = parsed.results.get(name);
    // Interrupted at the deadline, a Ginkgo binary still reports ("Interrupted by User"): the
    // test timed out all the same, and what it said is kept.
    if (outcome.timedOut) {
      const timedOut = harnessFailure(name, "timeout", `test binary ${exit}`);
      if (!reported) return timedOut;
      timedOut.error += `; it reported ${reported.result}${reported.error ? `: ${reported.error}` : ""}`;
      timedOut.output = capText(reported.output, MAX_OUTPUT_CHARS);
      return timedOut;
    }
    if (reported) {
      // Object.assign rather than spreads: see toRecord in runner/run-plan.ts.
      return Object.assign({}, reported, {
        duration: normalizeDuration({
          duration: reported.duration,
          startTime: reported.startTime,
          endTime: reported.endTime,
          observedMs: outcome.durationMs,
        }),
        output: capText(reported.output, MAX_OUTPUT_CHARS),
      });
    }
    const malformed = parsed.malformedResults.get(name);
    if (malformed) return harnessFailure(name, "malformed-result", `malformed result record: ${malformed}`);
    if (outcome.outputLimitExceeded) return harnessFailure(name, "output-limit", `test binary ${exit}`);
    const crashed =
      outcome.spawnError !== undefined ||
      outcome.lost !== undefined ||
      outcome.signal !== null ||
      outcome.exitCode !== 0;
    const detail = parsed.malformedLines > 0 ? `; ${parsed.malformedLines} malformed JSON line(s)` : "";
    return harnessFailure(
      name,
      crashed ? "crashed" : "no-result",
      `${NO_RESULT_ERROR} (test binary ${exit}${detail})`,
    );
  });
  return { outcomes, aborted: outcome.aborted };
}
