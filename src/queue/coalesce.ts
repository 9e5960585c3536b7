export interface Coalescer {
  /** Asks for `task` to run; requests made while it waits or runs fold into one run. */
  request(): void;
  /** Stops scheduling, waits for a running task, then runs the latest pending request once more. */
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
  let stopped = false;

  const fire = () => {
    timer = undefined;
    if (!pending || stopped) return;
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
    if (running || timer || stopped) return;
    timer = setTimeout(fire, Math.max(0, last + intervalMs - now()));
  };
  return {
    request() {
      pending = true;
      schedule();
    },
    async flush() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
      // The last request must not be lost: it carries the final state (e.g. 3/3 executions).
      if (pending) {
        pending = false;
        await task().catch(onError);
      }
    },
  };
}
