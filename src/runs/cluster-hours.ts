import type { HeldCluster } from "./run-record.ts";

/** Hours of clusters under test a run held: each from acquired to released (or `now`, still held). */
export function clusterHours(clusters: readonly HeldCluster[], now: Date): number {
  let ms = 0;
  for (const c of clusters) {
    const end = c.releasedAt ? Date.parse(c.releasedAt) : now.getTime();
    ms += Math.max(0, end - Date.parse(c.acquiredAt));
  }
  return ms / 3_600_000;
}
