import pLimit from "p-limit";
import type { Arch } from "@netstress/core/arch/arch.ts";
import type { PayloadCounts } from "../analysis/payload-counts.ts";
import type { ChangesBetween } from "./payload-changes-cache.ts";

/** Per payload of a history, what changed since the one before (none for the first), a few pairs read at a time. */
export function changesAlong(
  history: readonly PayloadCounts[],
  arch: Arch,
  changesBetween: ChangesBetween,
): Promise<(Awaited<ReturnType<ChangesBetween>> | undefined)[]> {
  const limit = pLimit(4);
  return Promise.all(
    history.map((entry, index) =>
      index === 0
        ? undefined
        : limit(() => changesBetween({ from: history[index - 1]!.payload, to: entry.payload, arch })),
    ),
  );
}
