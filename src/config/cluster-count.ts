import { z } from "zod";

/** Clusters under test per arm when a cluster source serves the run and nobody asked for a number. */
export const DEFAULT_CLUSTERS_PER_ARM = 2;
/** At most this many clusters per arm: each is a whole OpenShift cluster for the run's length. */
export const MAX_CLUSTERS_PER_ARM = 10;

/** How many clusters under test each arm's iterations spread over (repository config, gate request). */
export const clusterCountSchema = z
  .int()
  .min(1)
  .max(MAX_CLUSTERS_PER_ARM)
  .describe(
    `Clusters under test per arm, each running that arm's payload; the iterations spread over them (1–${MAX_CLUSTERS_PER_ARM}). Only used when the bot has a cluster source.`,
  );
