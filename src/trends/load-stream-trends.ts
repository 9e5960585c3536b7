import type { Arch } from "@netstress/core/arch/arch.ts";
import type { PayloadCounts } from "../analysis/payload-counts.ts";
import { scanFirstBadPayloads } from "../analysis/first-bad-payload.ts";
import { buildTrendView, type TrendView } from "../report/trend-view.ts";
import { changesAlong } from "./changes-along.ts";
import type { ChangesBetween } from "./payload-changes-cache.ts";

/**
 * The trends of a stream on an arch, as the page shows them and `netstress trends` prints them:
 * the history per payload, what changed between each payload and the one before (a few pairs read
 * at a time), and the first bad payloads the changepoint finds.
 */
export async function loadStreamTrends(options: {
  history: { readPayloadHistory(input: { stream: string; arch: Arch }): Promise<PayloadCounts[]> };
  changesBetween: ChangesBetween;
  stream: string;
  arch: Arch;
}): Promise<TrendView> {
  const { stream, arch } = options;
  const history = await options.history.readPayloadHistory({ stream, arch });
  const changes = await changesAlong(history, arch, options.changesBetween);
  return buildTrendView({ stream, arch, history, changes, firstBad: scanFirstBadPayloads({ history }) });
}
