import { parentPort } from "node:worker_threads";
import { scanFirstBadPayloads } from "../analysis/first-bad-payload.ts";
import { buildTrendView } from "../report/trend-view.ts";

/**
 * A worker thread's body: builds trend views (the first-bad-payload scan costs seconds of CPU on a
 * large history) away from the event loop that answers webhooks and pages.
 */
parentPort?.on("message", (input: Omit<Parameters<typeof buildTrendView>[0], "firstBad">) => {
  parentPort!.postMessage(
    buildTrendView({ ...input, firstBad: scanFirstBadPayloads({ history: input.history }) }),
  );
});
