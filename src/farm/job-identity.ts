import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Arm } from "@netstress/core/model/result-record.ts";
import { DNS_LABEL } from "@netstress/core/kube/kubernetes-names.ts";
import {
  LABELS,
  labelSafe,
  MANAGED_BY,
  RUN_ID_ANNOTATION,
  runKey,
} from "@netstress/core/kube/netstress-labels.ts";
import { FarmError } from "./farm-error.ts";

export const RUNNER_COMPONENT = "shard-runner";
/** The pod's plan (JSON), mounted into the runner through the downward API. */
export const PLAN_ANNOTATION = "netstress.io/plan";

/** Selects everything one bot deployment manages in a namespace (watches, reconciliation). */
export function managedSelector(instance: string): string {
  return `${LABELS.managedBy}=${MANAGED_BY},${LABELS.component}=${RUNNER_COMPONENT},${LABELS.instance}=${labelSafe(instance)}`;
}

/** One pod's worth of work: one iteration of a shard, one attempt at it. */
export interface IterationKey {
  runId: string;
  arch: Arch;
  arms: readonly Arm[];
  iteration: number;
  /** 0 first; an iteration lost to the infrastructure is run again as attempt 1, 2 … */
  attempt: number;
}

function armsCode(arms: readonly Arm[]): string {
  const set = new Set(arms);
  if (set.has("pr") && set.has("baseline")) return "both";
  return set.has("baseline") ? "baseline" : "pr";
}

/**
 * The Job's name, a pure function of run, arms, arch, iteration and attempt: dispatching the same
 * thing twice (a retry after a timeout, a restarted bot) meets 409 instead of creating a twin.
 */
export function jobName(key: IterationKey): string {
  const name = `nst-${runKey(key.runId)}-${armsCode(key.arms)}-${key.arch}-i${key.iteration}-a${key.attempt}`;
  if (name.length > 63 || !DNS_LABEL.test(name)) {
    throw new FarmError("invalid-shard", `"${name}" is not a valid Job name (RFC 1123 label, at most 63)`);
  }
  return name;
}

/** Labels of the Job and its pod. */
export function jobLabels(
  key: IterationKey & { shardId: string; instance: string; pr?: number },
): Record<string, string> {
  return {
    [LABELS.managedBy]: MANAGED_BY,
    [LABELS.component]: RUNNER_COMPONENT,
    [LABELS.instance]: labelSafe(key.instance),
    [LABELS.run]: runKey(key.runId),
    [LABELS.arms]: armsCode(key.arms),
    [LABELS.arch]: key.arch,
    [LABELS.shard]: labelSafe(key.shardId),
    [LABELS.iteration]: String(key.iteration),
    [LABELS.attempt]: String(key.attempt),
    ...(key.pr !== undefined ? { [LABELS.pr]: String(key.pr) } : {}),
  };
}

/** What a Job's labels and annotations say about it; undefined for objects that are not ours. */
export function readJobIdentity(metadata: {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}): { runId: string; iteration: number; attempt: number; arch: string } | undefined {
  const labels = metadata.labels ?? {};
  const runId = metadata.annotations?.[RUN_ID_ANNOTATION];
  const iteration = Number(labels[LABELS.iteration]);
  const attempt = Number(labels[LABELS.attempt]);
  const arch = labels[LABELS.arch];
  if (labels[LABELS.managedBy] !== MANAGED_BY || !runId || !arch) return undefined;
  if (!Number.isSafeInteger(iteration) || !Number.isSafeInteger(attempt)) return undefined;
  return { runId, iteration, attempt, arch };
}
