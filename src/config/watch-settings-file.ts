import { unwatchFile, watchFile, type Stats } from "node:fs";
import type { Logger } from "pino";

export interface SettingsFileSource<T> {
  /** The settings in force: the last version of the file that loaded and validated. */
  current(): T;
  stop(): void;
}

/**
 * Loads a settings file and reloads it when it changes (polled, so that a mounted ConfigMap's
 * atomic symlink swap is seen too). A broken edit keeps the last good settings and is logged once
 * (the same problem again is not logged again until a good version loaded in between). `onChange`
 * hears each good version after the first; reloads and their `onChange` run one at a time.
 */
export async function watchSettingsFile<T>(options: {
  path: string;
  load: (path: string) => Promise<T>;
  /** What the file holds, for the log ("periodics configuration"). */
  what: string;
  logger: Logger;
  /** The file's contents already loaded at start-up; read from the file when absent. */
  initial?: T;
  onChange?: (next: T) => Promise<void> | void;
  intervalMs?: number;
}): Promise<SettingsFileSource<T>> {
  const { path, what, logger } = options;
  let settings: T = options.initial ?? (await options.load(path));
  let lastProblem: string | undefined;
  let queue: Promise<void> = Promise.resolve();
  const reload = async () => {
    let next: T;
    try {
      next = await options.load(path);
    } catch (error) {
      const problem = (error as Error).message;
      if (problem !== lastProblem) {
        logger.error({ path, err: error }, `${what} change ignored; the last good one stays`);
      }
      lastProblem = problem;
      return;
    }
    lastProblem = undefined;
    settings = next;
    logger.info({ path }, `${what} reloaded`);
    await options.onChange?.(next);
  };
  const onFileChange = (now: Stats, before: Stats) => {
    if (now.mtimeMs === before.mtimeMs && now.ino === before.ino && now.size === before.size) return;
    queue = queue
      .then(reload)
      .catch((error: unknown) =>
        logger.error({ path, err: error }, `${what} reloaded, but applying it failed`),
      );
  };
  watchFile(path, { interval: options.intervalMs ?? 5000, persistent: false }, onFileChange);
  return { current: () => settings, stop: () => unwatchFile(path, onFileChange) };
}
