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
  /** Tests running at once in a gate run. */
  parallel: number;
  timeoutMinutes: number;
}

/**
 * The gate's settings from its parsed environment, or the problems that stop start-up (a gate API
 * without a release-controller cannot resolve streams).
 */
export function gateSettingsFrom(
  e: z.infer<typeof gateEnvSchema>,
): { ok: true; settings: GateSettings } | { ok: false; problems: string[] } {
  if (e.NETSTRESS_GATE_TOKENS_PATH && !e.NETSTRESS_RELEASE_CONTROLLER_URL) {
    return {
      ok: false,
      problems: [
        "NETSTRESS_GATE_TOKENS_PATH is set but NETSTRESS_RELEASE_CONTROLLER_URL is not: gates resolve release streams through it",
      ],
    };
  }
  const settings: GateSettings = {
    ...(e.NETSTRESS_GATE_TOKENS_PATH ? { tokensPath: e.NETSTRESS_GATE_TOKENS_PATH } : {}),
    ...(e.NETSTRESS_RELEASE_CONTROLLER_URL
      ? { releaseControllerUrl: e.NETSTRESS_RELEASE_CONTROLLER_URL.replace(/\/+$/, "") }
      : {}),
    parallel: e.NETSTRESS_GATE_PARALLEL,
    timeoutMinutes: e.NETSTRESS_GATE_TIMEOUT_MINUTES,
  };
  return { ok: true, settings };
}
