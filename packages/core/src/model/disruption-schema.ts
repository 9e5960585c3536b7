import { z } from "zod";
import { CONNECTIONS } from "./network-paths.ts";

/** The OTE `details[]` entry an invariant, disruptive or upgrade test reports its disruption in. */
export const DISRUPTION_DETAIL_NAME = "netstress.disruption";

/** More intervals than this per entry are cut (the totals stay as reported); a flapping path would swamp a record. */
export const MAX_DISRUPTION_INTERVALS = 500;

const utcInstant = z.iso.datetime({ offset: false, local: false });

export const disruptionIntervalSchema = z
  .object({
    from: utcInstant,
    to: utcInstant,
    reason: z.string().max(2_000),
    source: z.string().max(500).optional(),
    target: z.string().max(500).optional(),
  })
  .refine((interval) => Date.parse(interval.from) <= Date.parse(interval.to), {
    message: "an interval ends before it starts",
  });
export type DisruptionInterval = z.infer<typeof disruptionIntervalSchema>;

/**
 * One path over one kind of connection, as one test observed it (the network contract's
 * `Disruption`). Any kebab-case path name is accepted, so that a third-party invariant's own paths
 * are compared too.
 */
export const disruptionSchema = z
  .object({
    path: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "a path is a kebab-case name such as pod-to-pod-cross-node"),
    connection: z.enum(CONNECTIONS),
    observedSeconds: z.number().finite().nonnegative(),
    disruptedSeconds: z.number().finite().nonnegative(),
    budgetSeconds: z.number().finite().nonnegative(),
    intervals: z.array(disruptionIntervalSchema),
    /** Intervals beyond MAX_DISRUPTION_INTERVALS that were not kept. */
    intervalsOmitted: z.number().int().positive().optional(),
  })
  .refine((entry) => entry.disruptedSeconds <= entry.observedSeconds + 0.001, {
    message: "disruptedSeconds is larger than observedSeconds",
    path: ["disruptedSeconds"],
  });
export type Disruption = z.infer<typeof disruptionSchema>;
