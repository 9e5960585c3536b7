export interface Coalescer {
  /** Asks for `task` to run; requests made while it waits or runs fold into one run. */
  request(): void;
  /**
   * Runs the latest pending request now (after a running task), without waiting for its interval,
   * and resolves once it ran. Requests made afterwards are scheduled as before: a run flushes
   * mid-way (clusters acquired, a shard finished) and its progress goes on.
   */
  flush(): Promise<void>;
}

/**
 * Runs an async task at most once per `intervalMs`, one at a time, and only for the latest
 * request: frequent progress becomes one check-run update now and then.
 */
export function createCoalescer(options: {
  intervalMs: number;
  task: () => Promise<void>;
  onError: (error: unknown) => void;
  now?: () => number;
}): Coalescer {
  const { intervalMs, task, onError, now = Date.now } = options;
  let pending = false;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let last = -Infinity;

  const fire = () => {
    timer = undefined;
    if (!pending) return;
    pending = false;
    last = now();
    running = task()
      .catch(onError)
      .finally(() => {
        running = undefined;
        if (pending) schedule();
      });
  };
  const schedule = () => {
    if (running || timer) return;
    timer = setTimeout(fire, Math.max(0, last + intervalMs - now()));
  };
  return {
    request() {
      pending = true;
      schedule();
    },
    async flush() {
      // The last request must not be lost: it carries the final state (e.g. 3/3 executions).
      for (;;) {
        if (timer) clearTimeout(timer);
        timer = undefined;
        if (running) await running;
        else if (pending) fire();
        else return;
      }
    },
  };
}
