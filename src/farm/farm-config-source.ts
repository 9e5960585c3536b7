import { unwatchFile, watchFile, type Stats } from "node:fs";
import type { Logger } from "pino";
import type { FarmConfig } from "./farm-config.ts";
import { loadFarmConfig } from "./load-farm-config.ts";

export interface FarmConfigSource {
  /** The configuration in force: the last one that loaded and validated. */
  current(): FarmConfig;
  stop(): void;
}

/**
 * Loads the farm configuration and reloads it when the file changes (polled, so that a mounted
 * ConfigMap's atomic symlink swap is seen too). A broken edit is logged and ignored: the farm keeps
 * running on the last good configuration. Placement, capacity, blocking and the pod template take
 * effect for the next shard; a changed kubeconfig or namespace of an existing cluster needs a
 * restart, which is safe (running Jobs are adopted).
 */
export async function watchFarmConfig(options: {
  path: string;
  logger: Logger;
  intervalMs?: number;
}): Promise<FarmConfigSource> {
  const { path, logger } = options;
  let config = await loadFarmConfig(path);
  const reload = () => {
    loadFarmConfig(path).then(
      (next) => {
        config = next;
        logger.info({ path, clusters: next.clusters.map((c) => c.name) }, "farm config reloaded");
      },
      (error: unknown) =>
        logger.error({ path, err: error }, "farm config change ignored; the last good configuration stays"),
    );
  };
  const onChange = (now: Stats, before: Stats) => {
    if (now.mtimeMs !== before.mtimeMs || now.ino !== before.ino) reload();
  };
  watchFile(path, { interval: options.intervalMs ?? 5000, persistent: false }, onChange);
  return { current: () => config, stop: () => unwatchFile(path, onChange) };
}
