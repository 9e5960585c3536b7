import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Registry } from "../registry/create-registry.ts";
import type { DistributionClient } from "../registry/distribution-client.ts";
import { assemblePrPayload, type PrPayload } from "./assemble-pr-payload.ts";
import { checkPrPayload } from "./check-pr-payload.ts";
import { PayloadError } from "./payload-error.ts";

export interface PreparePrPayloadOptions {
  /** The released payload the PR is compared against. */
  base: string;
  /** Payload tag → the PR's image for it (the repository's tags through its pr_image template). */
  overrides: ReadonlyMap<string, string>;
  /** The arches the PR's clusters run: a published PR payload is checked on each. */
  arches: readonly Arch[];
  /** The repository's `pr_payload`, expanded: CI's PR release image, used once it checks out. */
  prPayload?: string;
  /** Where an assembled payload is pushed (NETSTRESS_PR_PAYLOAD_REPOSITORY). */
  targetRepository?: string;
  registry: Registry;
  client: DistributionClient;
  signal?: AbortSignal;
}

/**
 * The payload a PR's clusters install: the one CI published (`pr_payload`) once it points the PR's
 * tags at the PR's images, or else one assembled from the base and the PR's images and pushed to
 * the bot's PR payload repository. Either way pinned by digest, with each arch's image.
 */
export async function preparePrPayload(options: PreparePrPayloadOptions): Promise<PrPayload> {
  if (options.prPayload) {
    return checkPrPayload({
      payload: options.prPayload,
      overrides: options.overrides,
      arches: options.arches,
      registry: options.registry,
    });
  }
  if (!options.targetRepository) {
    throw new PayloadError(
      "pr-payload-unusable",
      "the PR payload has to be assembled and this bot has nowhere to push it: its operator sets NETSTRESS_PR_PAYLOAD_REPOSITORY, or the repository names CI's PR release image in pr_payload",
    );
  }
  return assemblePrPayload({
    base: options.base,
    overrides: options.overrides,
    targetRepository: options.targetRepository,
    registry: options.registry,
    client: options.client,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
