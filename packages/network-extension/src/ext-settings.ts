import { z } from "zod";
import { ExtError } from "./ext-error.ts";

const seconds = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === "" ? fallback : Number(v)))
    .pipe(z.number().finite().nonnegative());

const schema = z.object({
  NETSTRESS_PROBE_INTERVAL_MS: seconds(1000).pipe(z.number().min(100)),
  NETSTRESS_PROBE_TIMEOUT_MS: seconds(2000).pipe(z.number().min(100)),
  NETSTRESS_PROBE_START_SECONDS: seconds(180),
  NETSTRESS_DISRUPTION_BUDGET_SECONDS: seconds(0),
  NETSTRESS_DISRUPTION_SETTLE_SECONDS: seconds(10),
  NETSTRESS_AGENT_READY_TIMEOUT_SECONDS: seconds(300),
  NETSTRESS_UPGRADE_TIMEOUT_SECONDS: seconds(5400),
  NETSTRESS_UPGRADE_TARGET: z
    .string()
    .optional()
    .transform((v) => v?.trim() || undefined),
});

/** The extension's settings, all from the environment, read once and checked together. */
export interface ExtSettings {
  /** The probe pods' image, by digest; unset outside a build farm until someone names one. */
  image: string | undefined;
  intervalMs: number;
  timeoutMs: number;
  startTimeoutMs: number;
  budgetSeconds: number;
  settleMs: number;
  agentReadyTimeoutMs: number;
  upgradeTimeoutMs: number;
  upgradeTarget: string | undefined;
}

/** A pullspec by digest: what it names cannot change under the probes. */
const PINNED = /^[^\s@]+@sha256:[a-f0-9]{64}$/;

export function readExtSettings(env: NodeJS.ProcessEnv): ExtSettings {
  const image = env.NETSTRESS_PROBE_IMAGE?.trim() || undefined;
  if (image !== undefined && !PINNED.test(image)) {
    const name = image.replace(/@.*$/, "").replace(/:[^/:]*$/, "");
    throw new ExtError(
      `NETSTRESS_PROBE_IMAGE=${image} does not name the image by digest: a tag can move, and the probe pods would run whatever it names then. Give the image you reviewed by digest, ${name}@sha256:<64 hex digits> (skopeo inspect --format '{{.Digest}}' docker://${image} prints it)`,
      { code: "ext-usage" },
    );
  }
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new ExtError(`bad setting (say a number, e.g. NETSTRESS_PROBE_INTERVAL_MS=1000): ${problems}`, {
      code: "ext-usage",
    });
  }
  const s = parsed.data;
  return {
    image,
    intervalMs: s.NETSTRESS_PROBE_INTERVAL_MS,
    timeoutMs: s.NETSTRESS_PROBE_TIMEOUT_MS,
    startTimeoutMs: s.NETSTRESS_PROBE_START_SECONDS * 1000,
    budgetSeconds: s.NETSTRESS_DISRUPTION_BUDGET_SECONDS,
    settleMs: s.NETSTRESS_DISRUPTION_SETTLE_SECONDS * 1000,
    agentReadyTimeoutMs: s.NETSTRESS_AGENT_READY_TIMEOUT_SECONDS * 1000,
    upgradeTimeoutMs: s.NETSTRESS_UPGRADE_TIMEOUT_SECONDS * 1000,
    upgradeTarget: s.NETSTRESS_UPGRADE_TARGET,
  };
}
