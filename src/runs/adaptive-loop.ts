/** How a step of an adaptive run ends it: with `end` (what the loop returns). */
export interface LoopEnd<End> {
  end: End;
}

/**
 * The steps of an adaptive run, each filled in by whoever runs it (the bot's execute stage, the
 * demo): where it keeps its batches and decisions, where its clusters come from and how a batch
 * runs on them.
 */
export interface AdaptiveSteps<Batch, Ready, End> {
  /** Plan: the batch planned before and not finished (a resumed run's), if any. */
  planned(): Promise<Batch | undefined | LoopEnd<End>>;
  /** Decide: the decision step over what finished since it last ran — the next batch, or the run's end. */
  decide(): Promise<Batch | LoopEnd<End>>;
  /** Make the batch's clusters ready: acquire new ones, upgrade those it moves to another payload. */
  ready(batch: Batch): Promise<Ready | LoopEnd<End>>;
  /** Run the batch on them; undefined once its results are kept. */
  run(batch: Batch, ready: Ready): Promise<undefined | LoopEnd<End>>;
}

const ended = <End>(value: unknown): value is LoopEnd<End> =>
  typeof value === "object" && value !== null && "end" in value;

/**
 * An adaptive run's one loop: plan the next batch (the one a stopped run left unfinished, else the
 * decision step's after what finished) → make its clusters ready → run it → decide again, until a
 * step ends the run (every test decided, the budget spent, the run stopped).
 */
export async function runAdaptiveLoop<Batch, Ready, End>(
  steps: AdaptiveSteps<Batch, Ready, End>,
): Promise<End> {
  for (;;) {
    const planned = await steps.planned();
    if (ended<End>(planned)) return planned.end;
    const batch = planned ?? (await steps.decide());
    if (ended<End>(batch)) return batch.end;
    const ready = await steps.ready(batch);
    if (ended<End>(ready)) return ready.end;
    const ran = await steps.run(batch, ready);
    if (ran) return ran.end;
  }
}
