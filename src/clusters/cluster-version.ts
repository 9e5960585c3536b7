import { z } from "zod";
import { samePayload } from "../registry/same-payload.ts";

const conditionSchema = z.object({ type: z.string(), status: z.string(), message: z.string().optional() });

/** The parts of a config.openshift.io/v1 ClusterVersion the sources read. */
export const clusterVersionSchema = z.object({
  spec: z
    .object({
      desiredUpdate: z.object({ image: z.string().optional(), force: z.boolean().optional() }).optional(),
    })
    .optional(),
  status: z
    .object({
      desired: z.object({ image: z.string().optional(), version: z.string().optional() }).optional(),
      history: z
        .array(z.object({ state: z.string(), image: z.string(), version: z.string().optional() }))
        .default([]),
      conditions: z.array(conditionSchema).default([]),
    })
    .optional(),
});
export type ClusterVersion = z.infer<typeof clusterVersionSchema>;

/** What a cluster runs, as its ClusterVersion says. */
export interface ClusterVersionState {
  /** status.desired.image: the payload it runs or is moving to. */
  payload: string | undefined;
  /** The newest history entry is that payload, Completed, and Available=True, Progressing=False. */
  settled: boolean;
  /** Why it is not settled (a Failing message, an upgrade in progress), for the reader. */
  detail: string | undefined;
  /**
   * ReleaseAccepted=False: the cluster-version operator refused the update it was asked for (an
   * unverifiable or unloadable payload); its message names the image. It waits for a new request.
   */
  refused: string | undefined;
}

export function clusterVersionState(version: ClusterVersion): ClusterVersionState {
  const status = version.status;
  const payload = status?.desired?.image;
  const condition = (type: string) => status?.conditions.find((c) => c.type === type);
  const newest = status?.history[0];
  const completed =
    newest !== undefined &&
    newest.state === "Completed" &&
    payload !== undefined &&
    samePayload(newest.image, payload);
  const settled =
    completed && condition("Available")?.status === "True" && condition("Progressing")?.status === "False";
  const failing = condition("Failing");
  const detail = settled
    ? undefined
    : failing?.status === "True"
      ? `Failing: ${failing.message ?? "no message"}`
      : newest?.state === "Partial"
        ? `moving to ${payload ?? "an unknown payload"}`
        : "not Available, or still Progressing";
  const accepted = condition("ReleaseAccepted");
  const refused = accepted?.status === "False" ? (accepted.message ?? "no message") : undefined;
  return { payload, settled, detail, refused };
}
