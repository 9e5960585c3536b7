import { z } from "zod";

/**
 * The gate's environment. Gates (and repositories' release_stream) need the release-controller,
 * NETSTRESS_RELEASE_CONTROLLER_URL; a process with workers then runs gate jobs, and one with
 * NETSTRESS_GATE_TOKENS_PATH (the mounted tokens secret) also answers the gate API.
 */
export const gateEnvSchema = z.looseObject({
  NETSTRESS_GATE_TOKENS_PATH: z
    .string()
    .optional()
    .describe(
      "File or directory (a mounted Secret) of gate API bearer tokens, one per line; unset or empty: this process answers no gate API",
    ),
  NETSTRESS_RELEASE_CONTROLLER_URL: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe(
      "Base URL of the release-controller whose /api/v1/releasestream/{stream}/latest names a stream's latest payload; unset: no gates and no release_stream",
    ),
  NETSTRESS_GATE_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(2)
    .describe("Gate arches a worker process runs at once"),
  NETSTRESS_GATE_PARALLEL: z.coerce
    .number()
    .int()
    .min(1)
    .max(256)
    .default(8)
    .describe("Tests running at once in a gate run"),
  NETSTRESS_GATE_TIMEOUT_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(360)
    .describe("A gate arch still running after this long ends Inconclusive"),
});

export interface GateSettings {
  tokensPath?: string;
  releaseControllerUrl?: string;
  concurrency: number;
  parallel: number;
  timeoutMinutes: number;
}

export class GateSettingsError extends Error {
  override readonly name = "GateSettingsError";
}

/** Reads the gate's settings once, at start-up; a gate without a release-controller cannot work. */
export function loadGateSettings(env: NodeJS.ProcessEnv = process.env): GateSettings {
  const parsed = gateEnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new GateSettingsError(`the gate's settings are invalid:\n${problems.join("\n")}`);
  }
  const e = parsed.data;
  if (e.NETSTRESS_GATE_TOKENS_PATH && !e.NETSTRESS_RELEASE_CONTROLLER_URL) {
    throw new GateSettingsError(
      "NETSTRESS_GATE_TOKENS_PATH is set but NETSTRESS_RELEASE_CONTROLLER_URL is not: gates resolve release streams through it",
    );
  }
  return {
    ...(e.NETSTRESS_GATE_TOKENS_PATH ? { tokensPath: e.NETSTRESS_GATE_TOKENS_PATH } : {}),
    ...(e.NETSTRESS_RELEASE_CONTROLLER_URL
      ? { releaseControllerUrl: e.NETSTRESS_RELEASE_CONTROLLER_URL.replace(/\/+$/, "") }
      : {}),
    concurrency: e.NETSTRESS_GATE_CONCURRENCY,
    parallel: e.NETSTRESS_GATE_PARALLEL,
    timeoutMinutes: e.NETSTRESS_GATE_TIMEOUT_MINUTES,
  };
}
