import { z } from "zod";
import { CONNECTIONS, NETWORK_PATHS } from "../model/network-paths.ts";

/** One stretch of time a path was failing, between two probe state changes (ISO-8601 UTC). */
export const disruptionIntervalSchema = z.object({
  from: z.string(),
  to: z.string(),
  reason: z.string(),
  source: z.string().optional(),
  target: z.string().optional(),
});
export type DisruptionInterval = z.infer<typeof disruptionIntervalSchema>;

/**
 * What a result says about one path over one kind of connection, in its `details[]` entry
 * `netstress.disruption`: how long it was probed, how long it was failing (the union of every
 * probe pair's failing intervals), the budget it was allowed, and the intervals themselves.
 */
export const disruptionSchema = z.object({
  path: z.enum(NETWORK_PATHS),
  connection: z.enum(CONNECTIONS),
  observedSeconds: z.number().nonnegative(),
  disruptedSeconds: z.number().nonnegative(),
  budgetSeconds: z.number().nonnegative(),
  intervals: z.array(disruptionIntervalSchema),
});
export type Disruption = z.infer<typeof disruptionSchema>;

/** The name of the `details[]` entry that carries `Disruption[]`. */
export const DISRUPTION_DETAIL = "netstress.disruption";
