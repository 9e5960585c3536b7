import { adaptiveSettings, type AdaptiveSettings } from "./adaptive-settings.ts";
import { parseTarget } from "./parse-target.ts";
import type { BotSettings } from "./bot-settings.ts";
import type { RepoConfigResult } from "./load-repo-config.ts";
import { REPO_CONFIG_PATH, type RepoConfig } from "./repo-config.ts";

/** What a run is built from: the payload, the PR's images and the run settings. */
export interface RunSource {
  tags: string[];
  prImage?: string;
  /** CI's PR release payload (a template like prImage, without {tag}). */
  prPayload?: string;
  payload?: string;
  releaseStream?: string;
  /** Build-farm capabilities every shard needs beyond its arch (none when absent). */
  capabilities?: string[];
  parallel: number;
  networkParallel?: number;
  /** Clusters under test per arm (when the bot has a cluster source). */
  clusters?: number;
  timeoutMinutes: number;
  imageWaitMinutes: number;
  /** The rise in a test's failure probability a run must be able to see (`target`; runs stored before it lack it). */
  target?: { from: number; to: number };
  /** mode: adaptive: run in batches until every test is decided or the budget is spent. */
  adaptive?: AdaptiveSettings;
}

/**
 * Merges a repository's configuration with the operator's defaults. Local OCI layouts (`oci:`)
 * name files on the bot's own machine, so only the operator may use them, never a repository.
 */
export function runSource(
  config: RepoConfig,
  defaults: BotSettings["defaults"],
): { ok: true; source: RunSource } | { ok: false; problems: string[] } {
  const problems = (["payload", "pr_image", "pr_payload", "release_stream"] as const)
    .filter((key) => config[key]?.trim().toLowerCase().startsWith("oci:"))
    .map(
      (key) =>
        `${key}: local OCI layouts (oci:…) may be set by the bot's operator only, not in ${REPO_CONFIG_PATH}`,
    );
  if (problems.length > 0) return { ok: false, problems };
  const ownPayload = config.payload ?? config.release_stream;
  const prImage = config.pr_image ?? defaults.prImage;
  const adaptive = adaptiveSettings(config);
  return {
    ok: true,
    source: {
      tags: config.tags.length > 0 ? config.tags : defaults.tags,
      ...(prImage ? { prImage } : {}),
      ...(config.pr_payload ? { prPayload: config.pr_payload } : {}),
      // A repository naming its own payload or stream replaces the default payload entirely.
      ...(config.payload ? { payload: config.payload } : {}),
      ...(config.release_stream ? { releaseStream: config.release_stream } : {}),
      ...(!ownPayload && defaults.payload ? { payload: defaults.payload } : {}),
      ...(config.capabilities.length > 0 ? { capabilities: config.capabilities } : {}),
      parallel: config.parallel,
      clusters: config.clusters,
      ...(config.network_parallel ? { networkParallel: config.network_parallel } : {}),
      timeoutMinutes: config.timeout_minutes,
      imageWaitMinutes: config.image_wait_minutes,
      target: parseTarget(config.target),
      ...(adaptive ? { adaptive } : {}),
    },
  };
}

/** The run source of a repository whose configuration may be absent or unusable. */
export function runSourceFor(
  result: RepoConfigResult,
  defaults: BotSettings["defaults"],
): ReturnType<typeof runSource> {
  return result.kind === "invalid"
    ? { ok: false, problems: result.problems }
    : runSource(result.config, defaults);
}
