import { z } from "zod";

const count = z.number().int().nonnegative();
/** JSON writes an e-value too large for a double (+∞) as null. */
const eValue = z
  .number()
  .nonnegative()
  .nullable()
  .transform((value) => value ?? Infinity);

/** A crossover's baseline runs on a cluster as a state saved before blocks kept them: one tally. */
const savedBeforeBlocks = z.object({ cluster: count, runs: count, failed: count }).strict();

/** What the decision step has gathered on one test (every test the records name, monitors included). */
const testEvidenceSchema = z.object({
  name: z.string(),
  /** Executions read, skipped ones included. */
  executions: z.object({ pr: count, baseline: count }),
  /**
   * Its cluster contrasts, per cluster in the order the clusters first appeared, each cluster's
   * oldest first: the e-values are sums over them in this order, so they are kept to recompute
   * them exactly when a batch adds one in the middle.
   */
  contrasts: z.array(z.object({ cluster: count, values: z.array(z.number().min(-1).max(1)).min(1) })),
  /**
   * Crossover: its baseline runs on clusters not yet upgraded, in blocks of consecutive iterations
   * (each block's runs and failed iterations), oldest first. A state saved before blocks kept one
   * tally per cluster: it reads as one block.
   */
  waiting: z.array(
    z.preprocess(
      (entry) => {
        const saved = savedBeforeBlocks.safeParse(entry);
        if (!saved.success) return entry;
        const { cluster, runs, failed } = saved.data;
        return { cluster, blocks: [{ runs, failed }] };
      },
      z.object({ cluster: count, blocks: z.array(z.object({ runs: count, failed: count })) }),
    ),
  ),
  /**
   * Crossover: its contrasts through an upgrade called it a regression, and an upgrade alone can do
   * that. It was the `order`-th test so called (after `after` batches), and only contrasts of
   * clusters started after that confirm it (`confirmations`).
   */
  suspect: z.object({ order: count.min(1), after: count }).optional(),
  /**
   * A suspect's confirmation contrasts, oldest first: a new cluster on the PR payload against a new
   * one on the baseline payload of the same batch, neither upgraded.
   */
  confirmations: z.array(z.number().min(-1).max(1)).default([]),
  /** Derived from `contrasts`, kept so that a call recomputes only the tests its batch added to. */
  summary: z.object({
    contrasts: count,
    meanContrast: z.number().nullable(),
    regression: eValue,
    clean: eValue,
  }),
});
export type TestEvidence = z.infer<typeof testEvidenceSchema>;

/**
 * The decision step's state after the batches it has read (`decideBatch` returns it and takes it
 * back with the next batch), so that a call reads only its new batch. Plain JSON: the bot saves it
 * with every decision in the run record, and `netstress decide --state` in a file.
 */
export const decideStateSchema = z.object({
  payloads: z.enum(["same", "differ"]),
  /** The target rise the clean e-values bet against. */
  rise: z.number(),
  batches: count,
  /** Records read, every test's: executions spent. */
  records: count,
  /**
   * In the order they first appeared; `firstPr` (0-based batch) and `baseline` say what each ran;
   * `history`, the history payload (index) a cluster that started on the PR payload stands against.
   */
  clusters: z.array(
    z.object({
      name: z.string(),
      firstPr: count.optional(),
      baseline: z.boolean(),
      history: count.optional(),
    }),
  ),
  tests: z.array(testEvidenceSchema),
});
export type DecideState = z.infer<typeof decideStateSchema>;
