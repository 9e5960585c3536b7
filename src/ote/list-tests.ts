import type { BinarySandbox } from "./binary-sandbox.ts";
import { describeExit } from "./describe-exit.ts";
import { invokeBinary, type InvokeBinaryOptions, type InvokeBinaryOutcome } from "./invoke-binary.ts";
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
  /** Told about each spec line that cannot be read (and is left out), naming it. */
  onWarning?: (message: string) => void;
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
  outcome.lines.forEach((line, index) => {
    const trimmed = line.trim();
    if (!trimmed.startsWith("{")) return;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      problems.push(`line ${index + 1} is not JSON: ${trimmed.slice(0, 80)}`);
      return;
    }
    const parsed = oteSpecSchema.safeParse(value);
    if (parsed.success) {
      specs.push(parsed.data);
      return;
    }
    const name = (value as { name?: unknown } | null)?.name;
    problems.push(
      `line ${index + 1}${typeof name === "string" ? ` ("${name.slice(0, 200)}")` : ""}: ` +
        parsed.error.issues.map((i) => `${i.path.join(".") || "spec"}: ${i.message}`).join("; "),
    );
  });
  for (const problem of problems) {
    options.onWarning?.(`${options.binary} list: left out an unreadable spec, ${problem}`);
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
