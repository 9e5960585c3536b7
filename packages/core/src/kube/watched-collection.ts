import type { Logger } from "pino";
import type { KubeClient } from "./kube-client.ts";

interface Named {
  metadata?: { name?: string; resourceVersion?: string };
}

export interface WatchedCollection<T> {
  /** Resolves after the first complete list. */
  readonly ready: Promise<void>;
  get(name: string): T | undefined;
  values(): IterableIterator<T>;
  /** Lists and watch (re)connections so far, for tests and metrics. */
  readonly counters: { lists: number; watches: number; expired: number };
  stop(): void;
}

export type CollectionChange<T> = { type: "upsert"; object: T } | { type: "delete"; object: T };

/**
 * A local copy of a set of objects kept current the way client-go's reflector does it: list, then
 * watch from the list's resourceVersion with bookmarks (so a quiet watch still advances), resume
 * from the last version seen when the stream drops or stalls, and list again on 410 Gone — telling
 * the owner about every difference the relist reveals, deletions included.
 */
export function watchCollection<T extends Named>(options: {
  client: KubeClient;
  resource: "jobs" | "pods";
  labelSelector: string;
  logger: Logger;
  onChange: (change: CollectionChange<T>) => void;
  /**
   * What of each object to keep: the collection holds every Job and pod of the farm, so it keeps
   * only what the executor reads (the pod template and its plan stay out of memory).
   */
  keep: (object: T) => T;
  /** A watch silent this long (no event, no bookmark) is assumed dead and reopened. */
  idleMs: number;
  /** The server ends each watch after about this long; the collection then resumes. */
  watchSeconds?: number;
}): WatchedCollection<T> {
  const { client, resource, labelSelector, logger, onChange, keep } = options;
  const objects = new Map<string, T>();
  const counters = { lists: 0, watches: 0, expired: 0 };
  let stopped = false;
  let stopWatch: (() => void) | undefined;
  let wake: (() => void) | undefined;
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const relist = async (): Promise<string> => {
    counters.lists += 1;
    const list = (resource === "jobs"
      ? await client.listJobs(labelSelector)
      : await client.listPods(labelSelector)) as unknown as { items: T[]; resourceVersion: string };
    const seen = new Set<string>();
    for (const listed of list.items) {
      const object = keep(listed);
      const name = object.metadata?.name;
      if (!name) continue;
      seen.add(name);
      const previous = objects.get(name);
      objects.set(name, object);
      if (previous?.metadata?.resourceVersion !== object.metadata?.resourceVersion)
        onChange({ type: "upsert", object });
    }
    for (const [name, object] of objects) {
      if (seen.has(name)) continue;
      objects.delete(name);
      onChange({ type: "delete", object });
    }
    return list.resourceVersion;
  };

  /** One watch connection; resolves with what to do next. */
  const watchOnce = (resourceVersion: string, advance: (rv: string) => void) =>
    new Promise<"resume" | "relist">((resolve) => {
      counters.watches += 1;
      let idle: NodeJS.Timeout | undefined;
      let settled = false;
      const finish = (next: "resume" | "relist") => {
        if (settled) return;
        settled = true;
        clearTimeout(idle);
        stopWatch?.();
        resolve(next);
      };
      const alive = () => {
        clearTimeout(idle);
        idle = setTimeout(() => {
          logger.debug({ cluster: client.cluster, resource }, "watch silent too long; reconnecting");
          finish("resume");
        }, options.idleMs);
      };
      alive();
      client
        .watch(
          resource,
          { labelSelector, resourceVersion, timeoutSeconds: options.watchSeconds ?? 300 },
          {
            onEvent(type, object) {
              alive();
              const version = object.metadata?.resourceVersion;
              if (type === "ERROR") {
                const gone = (object as { code?: number }).code === 410;
                if (gone) counters.expired += 1;
                return finish(gone ? "relist" : "resume");
              }
              if (version) advance(version);
              if (type === "BOOKMARK") return;
              const name = (object as Named).metadata?.name;
              if (!name) return;
              const typed = keep(object as unknown as T);
              if (type === "DELETED") {
                objects.delete(name);
                onChange({ type: "delete", object: typed });
              } else {
                objects.set(name, typed);
                onChange({ type: "upsert", object: typed });
              }
            },
            onDone(error) {
              const status = (error as { statusCode?: number } | null)?.statusCode;
              if (status === 410) counters.expired += 1;
              finish(status === 410 ? "relist" : "resume");
            },
          },
        )
        .then(
          (stop) => {
            stopWatch = stop;
            if (settled || stopped) stop();
          },
          () => finish("resume"),
        );
    });

  void (async () => {
    let resourceVersion = "";
    let failures = 0;
    while (!stopped) {
      try {
        if (!resourceVersion) {
          resourceVersion = await relist();
          markReady();
        }
        const startedAt = Date.now();
        const next = await watchOnce(resourceVersion, (rv) => (resourceVersion = rv));
        if (next === "relist") resourceVersion = "";
        // A watch that ends at once is failing; back off instead of spinning.
        failures = Date.now() - startedAt < 1000 ? failures + 1 : 0;
      } catch (error) {
        failures += 1;
        logger.warn({ cluster: client.cluster, resource, err: error }, "list failed; retrying");
      }
      if (failures > 0 && !stopped)
        await pause(Math.min(10_000, 100 * 2 ** Math.min(failures, 7)) * (0.5 + Math.random() / 2));
    }
  })();

  return {
    ready,
    get: (name) => objects.get(name),
    values: () => objects.values(),
    counters,
    stop() {
      stopped = true;
      stopWatch?.();
      wake?.();
    },
  };
}
