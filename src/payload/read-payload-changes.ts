import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Registry } from "../registry/create-registry.ts";
import { diffPayloads, type PayloadChanges } from "./payload-changes.ts";
import { readRelease } from "./read-release.ts";

/** Reads two release payloads' image-references for an arch and says which components differ. */
export async function readPayloadChanges(options: {
  registry: Registry;
  from: string;
  to: string;
  arch: Arch;
}): Promise<PayloadChanges> {
  // Both reads finish before either's failure is told: nothing is left writing to the cache behind.
  const [from, to] = await Promise.allSettled(
    [options.from, options.to].map((reference) =>
      readRelease({ registry: options.registry, reference, arch: options.arch }),
    ),
  );
  if (from!.status === "rejected") throw from!.reason;
  if (to!.status === "rejected") throw to!.reason;
  return diffPayloads({ from: from!.value.references, to: to!.value.references });
}
