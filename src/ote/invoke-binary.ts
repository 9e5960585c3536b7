import type { BinarySandbox } from "./binary-sandbox.ts";
import { CappedJsonLine } from "./capped-json-line.ts";
import type { StartProcess } from "./start-process.ts";
import { startWithNodeSpawn } from "./start-with-node-spawn.ts";

export interface InvokeBinaryOptions {
  binary: string;
  args: readonly string[];
  /**
   * Whole-invocation deadline; on expiry the process group gets SIGINT, as origin interrupts a test
   * (Ginkgo then runs the test's cleanups and reports it), and escalates as `interruptGraceMs` says.
   */
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
  /** Variables of this invocation alone, on top of `env` (which many invocations may share). */
  extraEnv?: Readonly<Record<string, string>>;
  /** Where, and as whom, the binary runs; absent: here, as this process. */
  sandbox?: BinarySandbox;
  signal?: AbortSignal;
  /**
   * A stdout line longer than this is read as it streams: a JSON one keeps its structure and the
   * head and tail of its long strings (see CappedJsonLine), anything else is dropped (counted in
   * droppedBytes).
   */
  maxLineBytes?: number;
  /** JSON-looking stdout lines (results) kept in memory, in bytes; the rest are counted and dropped. */
  maxKeptBytes?: number;
  /** Other stdout lines (log noise) kept, in bytes: heavy logging never crowds out results. */
  maxNoiseBytes?: number;
  /** Total stdout+stderr after which the binary is killed: a runaway writer is not drained forever. */
  maxTotalBytes?: number;
  /**
   * After the first signal (SIGINT at the deadline; SIGTERM on abort or runaway output), how long the
   * binary has to wrap up before SIGABRT (a Go binary dumps its goroutines and exits); SIGKILL
   * follows KILL_AFTER_ABORT_MS later, so that the group ends whatever it does. Default 60 s, as origin.
   */
  interruptGraceMs?: number;
  /** How the process is started; Node's spawn unless given. */
  start?: StartProcess;
}

export interface InvokeBinaryOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** Killed because it wrote more than maxTotalBytes. */
  outputLimitExceeded: boolean;
  /** The process could not be started (ENOENT, EACCES, ENOEXEC …). */
  spawnError?: NodeJS.ErrnoException;
  /** Its end was never observed (the process spawner died): why. */
  lost?: string;
  lines: string[];
  droppedBytes: number;
  stderrTail: string;
  durationMs: number;
}

const STDERR_TAIL_BYTES = 16 * 1024;

/** Between SIGABRT and the SIGKILL that guarantees the group is gone: time for a goroutine dump. */
export const KILL_AFTER_ABORT_MS = 10_000;

export const DEFAULT_INTERRUPT_GRACE_MS = 60_000;

/** Of an oversized JSON line: each end kept of its long strings (more than a result's output keeps). */
const MAX_STRING_END_CHARS = 64 * 1024;
/** Of an oversized JSON line: all but its strings; a line with more is dropped. */
const MAX_STRUCTURE_CHARS = 1024 * 1024;

/**
 * Runs a test binary in its own process group with stdin closed, collecting stdout as lines with
 * bounded memory. Never throws for anything the binary does; the outcome says what happened.
 */
export function invokeBinary(options: InvokeBinaryOptions): Promise<InvokeBinaryOutcome> {
  const {
    maxLineBytes = 8 * 1024 * 1024,
    maxKeptBytes = 32 * 1024 * 1024,
    maxNoiseBytes = 4 * 1024 * 1024,
    maxTotalBytes = 512 * 1024 * 1024,
    interruptGraceMs = DEFAULT_INTERRUPT_GRACE_MS,
  } = options;
  const started = performance.now();

  return new Promise((resolve) => {
    const lines: string[] = [];
    let keptBytes = 0;
    let noiseBytes = 0;
    let droppedBytes = 0;
    let totalBytes = 0;
    let partial: Buffer[] = [];
    let partialBytes = 0;
    let partialOversized = false;
    /** The oversized JSON line being read, when partialOversized. */
    let capped: CappedJsonLine | undefined;
    let stderrTail = "";
    let timedOut = false;
    let aborted = false;
    let outputLimitExceeded = false;
    let settled = false;
    let stopping = false;
    let escalation: NodeJS.Timeout | undefined;

    // Events arrive asynchronously, after everything below is set up.
    const startProcess = options.start ?? startWithNodeSpawn;
    const child = startProcess(
      {
        binary: options.binary,
        args: options.args,
        env: options.env ?? process.env,
        ...(options.extraEnv ? { extraEnv: options.extraEnv } : {}),
        ...(options.sandbox ? { sandbox: options.sandbox } : {}),
      },
      {
        stdout: onStdout,
        stderr: onStderr,
        error: (error) => finish({ spawnError: error }),
        close: (exitCode, signal) => finish({ exitCode, signal }),
        lost: (lost) => finish({ lost }),
      },
    );
    const killGroup = (sig: NodeJS.Signals): void => child.killGroup(sig);
    // Signalled once: a second interrupt makes a Ginkgo binary exit at once, skipping its cleanups.
    // The timers stay referenced: the invocation is pending until the group has ended.
    const stop = (first: "SIGINT" | "SIGTERM"): void => {
      if (stopping) return;
      stopping = true;
      killGroup(first);
      escalation = setTimeout(() => {
        killGroup("SIGABRT");
        escalation = setTimeout(() => killGroup("SIGKILL"), KILL_AFTER_ABORT_MS);
      }, interruptGraceMs);
    };

    const deadline = setTimeout(() => {
      timedOut = true;
      stop("SIGINT");
    }, options.timeoutMs);
    const onAbort = (): void => {
      aborted = true;
      stop("SIGTERM");
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });

    const countTotal = (n: number): void => {
      totalBytes += n;
      if (totalBytes > maxTotalBytes && !outputLimitExceeded) {
        outputLimitExceeded = true;
        stop("SIGTERM");
      }
    };

    const keepLine = (line: string): void => {
      const size = Buffer.byteLength(line);
      const structured = line.trimStart().startsWith("{");
      if (structured ? keptBytes + size > maxKeptBytes : noiseBytes + size > maxNoiseBytes) {
        droppedBytes += size;
        return;
      }
      if (structured) keptBytes += size;
      else noiseBytes += size;
      lines.push(line);
    };

    const flushPartial = (): void => {
      const cappedLine = capped?.finish();
      if (cappedLine !== undefined) {
        keepLine(cappedLine);
        droppedBytes += Math.max(0, partialBytes - Buffer.byteLength(cappedLine));
      } else if (partialOversized) droppedBytes += partialBytes;
      else if (partialBytes > 0) {
        const line = (partial.length === 1 ? partial[0]! : Buffer.concat(partial)).toString("utf8");
        keepLine(line.endsWith("\r") ? line.slice(0, -1) : line);
      }
      partial = [];
      partialBytes = 0;
      partialOversized = false;
      capped = undefined;
    };

    function onStdout(chunk: Buffer): void {
      countTotal(chunk.length);
      let start = 0;
      for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
        appendPartial(chunk.subarray(start, nl));
        flushPartial();
        start = nl + 1;
      }
      if (start < chunk.length) appendPartial(chunk.subarray(start));
    }
    function appendPartial(piece: Buffer): void {
      partialBytes += piece.length;
      if (partialOversized) {
        capped?.feed(piece);
        return;
      }
      if (partialBytes > maxLineBytes) {
        partialOversized = true;
        // A result line, however large (a verbose test's output), is still read.
        if (startsJsonObject(partial[0] ?? piece)) {
          capped = new CappedJsonLine({
            stringEndChars: MAX_STRING_END_CHARS,
            maxStructureChars: MAX_STRUCTURE_CHARS,
          });
          for (const earlier of partial) capped.feed(earlier);
          capped.feed(piece);
        }
        partial = [];
        return;
      }
      partial.push(piece);
    }

    function onStderr(chunk: Buffer): void {
      countTotal(chunk.length);
      stderrTail = (stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
    }

    function finish(outcome: Partial<InvokeBinaryOutcome>): void {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      options.signal?.removeEventListener("abort", onAbort);
      // Leave no stragglers behind: descendants that outlived the binary share its group.
      killGroup("SIGKILL");
      clearTimeout(escalation);
      flushPartial();
      resolve({
        exitCode: null,
        signal: null,
        timedOut,
        aborted,
        outputLimitExceeded,
        lines,
        droppedBytes,
        stderrTail,
        durationMs: performance.now() - started,
        ...outcome,
      });
    }
  });
}

/** Whether a line's first bytes, past leading whitespace, open a JSON object. */
function startsJsonObject(bytes: Buffer): boolean {
  for (const byte of bytes) {
    if (byte === 0x20 || byte === 0x09 || byte === 0x0d) continue;
    return byte === 0x7b;
  }
  return false;
}
