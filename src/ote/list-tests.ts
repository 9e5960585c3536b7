import { describeExit } from "./describe-exit.ts";
import {
  invokeBinary,
  type BinarySandbox,
  type InvokeBinaryOptions,
  type InvokeBinaryOutcome,
} from "./invoke-binary.ts";
import { OteError } from "./ote-error.ts";
import { oteSpecSchema, type OteSpec } from "./schemas.ts";

export interface ListTestsOptions {
  binary: string;
  timeoutMs?: number;
  /** Extra `list` arguments: the environment flags. */
  args?: readonly string[];
  env?: NodeJS.ProcessEnv;
  sandbox?: BinarySandbox;
  signal?: AbortSignal;
  invoke?: (options: InvokeBinaryOptions) => Promise<InvokeBinaryOutcome>;
}

/** `<bin> list -o jsonl [flags]`: every spec the binary offers. Throws OteError when none can be read. */
export async function listTests(options: ListTestsOptions): Promise<OteSpec[]> {
  const { invoke = invokeBinary, timeoutMs = 120_000 } = options;
  const outcome = await invoke({
    binary: options.binary,
    args: ["list", "-o", "jsonl", ...(options.args ?? [])],
    timeoutMs,
    env: options.env,
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    signal: options.signal,
  });
  if (outcome.exitCode !== 0) {
    throw new OteError(
      `listing tests of ${options.binary} failed: the binary ${describeExit(outcome, timeoutMs)}` +
        (outcome.stderrTail ? `: ${outcome.stderrTail.trim().split("\n").slice(-3).join(" | ")}` : ""),
      { binary: options.binary },
    );
  }
  const specs: OteSpec[] = [];
  const problems: string[] = [];
  for (const line of outcome.lines) {
    const trimmed = line.trim();
    if (!trimmed.startsWith("{")) continue;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      problems.push(`not JSON: ${trimmed.slice(0, 80)}`);
      continue;
    }
    const parsed = oteSpecSchema.safeParse(value);
    if (parsed.success) specs.push(parsed.data);
    else problems.push(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  }
  if (specs.length === 0) {
    throw new OteError(
      `${options.binary} listed no tests` +
        (problems.length ? ` (${problems.length} unreadable line(s): ${problems[0]})` : ""),
      { binary: options.binary },
    );
  }
  return specs;
}
