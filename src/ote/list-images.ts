import { z } from "zod";
import type { BinarySandbox } from "./binary-sandbox.ts";
import { describeExit } from "./describe-exit.ts";
import { invokeBinary, type InvokeBinaryOptions, type InvokeBinaryOutcome } from "./invoke-binary.ts";
import { OteError } from "./ote-error.ts";
import { oteImageSchema, type OteImage } from "./schemas.ts";

/**
 * `<bin> images`: the container images the extension's tests pull, which origin mirrors for
 * disconnected clusters. The framework prints one JSON array on a line of its own (log noise may
 * surround it), `null` for an extension that registers none. Binaries built before the framework had the command exit non-zero: an OteError
 * saying how they ended.
 */
export async function listImages(options: {
  binary: string;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  sandbox?: BinarySandbox;
  invoke?: (options: InvokeBinaryOptions) => Promise<InvokeBinaryOutcome>;
}): Promise<OteImage[]> {
  const { invoke = invokeBinary, timeoutMs = 60_000 } = options;
  const outcome = await invoke({
    binary: options.binary,
    args: ["images"],
    timeoutMs,
    env: options.env,
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  });
  if (outcome.exitCode !== 0) {
    const said = outcome.stderrTail.trim().split("\n").at(-1)?.slice(0, 200);
    throw new OteError(
      `${options.binary} images failed: the binary ${describeExit(outcome, timeoutMs)}${said ? ` (${said})` : ""}`,
      { binary: options.binary },
    );
  }
  const line = outcome.lines.find((l) => /^\s*(\[|null\s*$)/.test(l));
  if (line === undefined) {
    throw new OteError(`${options.binary} images printed no JSON array`, { binary: options.binary });
  }
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (cause) {
    throw new OteError(`${options.binary} images printed malformed JSON`, { binary: options.binary, cause });
  }
  const parsed = z.array(oteImageSchema).safeParse(value ?? []);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new OteError(`${options.binary} images does not match the image list format: ${problems}`, {
      binary: options.binary,
    });
  }
  return parsed.data;
}
