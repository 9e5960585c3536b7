import type { BinarySandbox } from "./binary-sandbox.ts";
import { describeExit } from "./describe-exit.ts";
import { invokeBinary, type InvokeBinaryOptions, type InvokeBinaryOutcome } from "./invoke-binary.ts";
import { OteError } from "./ote-error.ts";
import { oteInfoSchema, type OteInfo } from "./schemas.ts";

export interface GetInfoOptions {
  binary: string;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  sandbox?: BinarySandbox;
  invoke?: (options: InvokeBinaryOptions) => Promise<InvokeBinaryOutcome>;
}

/** `<bin> info`: the extension's identity. Its JSON may span lines and sit among log noise. */
export async function getInfo(options: GetInfoOptions): Promise<OteInfo> {
  const { invoke = invokeBinary, timeoutMs = 60_000 } = options;
  const outcome = await invoke({
    binary: options.binary,
    args: ["info"],
    timeoutMs,
    env: options.env,
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  });
  if (outcome.exitCode !== 0) {
    throw new OteError(`${options.binary} info failed: the binary ${describeExit(outcome, timeoutMs)}`, {
      binary: options.binary,
    });
  }
  const text = outcome.lines.join("\n");
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start === -1 || end < start) {
    throw new OteError(`${options.binary} info printed no JSON object`, { binary: options.binary });
  }
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start, end + 1));
  } catch (cause) {
    throw new OteError(`${options.binary} info printed malformed JSON`, { binary: options.binary, cause });
  }
  const parsed = oteInfoSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new OteError(`${options.binary} info does not match the extension info format: ${problems}`, {
      binary: options.binary,
    });
  }
  return parsed.data;
}
