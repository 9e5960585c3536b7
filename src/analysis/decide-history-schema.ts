import { z } from "zod";

const count = z.number().int().nonnegative();

/**
 * The stream's history of the baseline payload as `netstress decide --history` reads it: per
 * payload (the history store's `PayloadCounts`, `readPayloadHistory`'s answer), per test its
 * iterations, failed ones and flakes. Each payload is a run on clusters of its own, so it is one
 * unit of the baseline's weather; give the payloads up to and including the baseline payload.
 */
export const decideHistorySchema = z.object({
  stream: z.string().optional(),
  arch: z.string().optional(),
  payloads: z.array(
    z.looseObject({
      release: z.string().optional(),
      payload: z.string().optional(),
      tests: z.record(
        z.string(),
        z
          .object({ executions: count, failures: count, flakes: count, clusters: count.optional() })
          .refine((test) => test.failures + test.flakes <= test.executions, {
            message: "failures and flakes exceed executions",
          }),
      ),
    }),
  ),
});
