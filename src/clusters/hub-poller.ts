import type { Logger } from "pino";
import { ClustersUnavailableError } from "../runs/clusters-unavailable-error.ts";
import { InstallStuckError } from "./install-stuck-error.ts";
import type { Kind, KubeObjects } from "@netstress/core/kube/kube-objects.ts";

/**
 * What a waiter makes of the object's latest state (undefined: it is not there); `stuck` fails
 * with InstallStuckError, for a state that never recovers.
 */
export type Verdict<T> = { done: T } | { fail: string; stuck?: boolean } | undefined;

interface Waiter {
  kind: Kind;
  name: string;
  judge(object: unknown): boolean;
}

/**
 * Waits on many hub objects with one list per kind and poll, however many clusters are on their
 * way: 200 installs cost two lists every `pollMs`, not 200 gets.
 */
export function createHubPoller(options: {
  hub: KubeObjects;
  namespace: string;
  labelSelector: string;
  pollMs: number;
  logger: Logger;
}) {
  const { hub, namespace, labelSelector, pollMs, logger } = options;
  const waiters = new Set<Waiter>();
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (timer === undefined && waiters.size > 0) timer = setTimeout(() => void poll(), pollMs);
  };
  const poll = async () => {
    const kinds = new Set([...waiters].map((w) => w.kind));
    for (const kind of kinds) {
      let items: unknown[];
      try {
        items = await hub.list(kind, { namespace, labelSelector });
      } catch (error) {
        logger.warn({ err: error, kind }, "hub list failed; trying again");
        continue;
      }
      const byName = new Map(items.map((o) => [(o as { metadata?: { name?: string } }).metadata?.name, o]));
      for (const waiter of [...waiters]) {
        if (waiter.kind === kind && waiter.judge(byName.get(waiter.name))) waiters.delete(waiter);
      }
    }
    timer = undefined;
    schedule();
  };
  return {
    /**
     * Resolves with the first `done`, rejects on `fail`, the deadline (none: only the signal ends
     * the wait) or the signal.
     */
    wait<T>(request: {
      kind: Kind;
      name: string;
      judge: (object: unknown) => Verdict<T>;
      deadlineMs?: number;
      what: string;
      signal: AbortSignal;
    }): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const finish = (settle: () => void) => {
          clearTimeout(deadline);
          request.signal.removeEventListener("abort", onAbort);
          waiters.delete(waiter);
          settle();
        };
        const onAbort = () => finish(() => reject(request.signal.reason as Error));
        const { deadlineMs } = request;
        const deadline =
          deadlineMs === undefined
            ? undefined
            : setTimeout(
                () =>
                  finish(() =>
                    reject(
                      new ClustersUnavailableError(
                        `${request.what} was not ready in ${Math.round(deadlineMs / 1000)} s`,
                      ),
                    ),
                  ),
                deadlineMs,
              );
        const waiter: Waiter = {
          kind: request.kind,
          name: request.name,
          judge(object) {
            let verdict: Verdict<T>;
            try {
              verdict = request.judge(object);
            } catch (error) {
              verdict = { fail: `${request.what}: ${(error as Error).message}` };
            }
            if (verdict === undefined) return false;
            if ("done" in verdict) finish(() => resolve(verdict.done));
            else
              finish(() =>
                reject(
                  verdict.stuck
                    ? new InstallStuckError(verdict.fail)
                    : new ClustersUnavailableError(verdict.fail),
                ),
              );
            return true;
          },
        };
        if (request.signal.aborted) return onAbort();
        request.signal.addEventListener("abort", onAbort, { once: true });
        waiters.add(waiter);
        schedule();
      });
    },
    stop() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
export type HubPoller = ReturnType<typeof createHubPoller>;
