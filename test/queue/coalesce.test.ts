import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createCoalescer } from "../../src/queue/coalesce.ts";

// The coalescer is timing logic: on fake timers each interval is exact, whatever the machine's load.
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("createCoalescer", () => {
  it("turns a burst of requests into at most one task per interval, ending with the latest", async () => {
    const runs: number[] = [];
    let latest = 0;
    let seen = 0;
    const started = Date.now();
    const coalescer = createCoalescer({
      intervalMs: 100,
      task: async () => {
        runs.push(Date.now() - started);
        seen = latest;
        await new Promise((r) => setTimeout(r, 20));
      },
      onError: () => {},
    });
    for (let i = 1; i <= 50; i++) {
      latest = i;
      coalescer.request();
      await vi.advanceTimersByTimeAsync(6);
    }
    await vi.advanceTimersByTimeAsync(250);
    await coalescer.flush();
    expect(seen).toBe(50);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs.length).toBeLessThanOrEqual(Math.ceil(runs.at(-1)! / 100) + 1);
    for (let i = 1; i < runs.length; i++) expect(runs[i]! - runs[i - 1]!).toBeGreaterThanOrEqual(95);
  });

  it("reports a failing task and keeps going", async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const coalescer = createCoalescer({
      intervalMs: 10,
      task: async () => {
        calls += 1;
        if (calls === 1) throw new Error("GitHub is down");
      },
      onError: (e) => errors.push(e),
    });
    coalescer.request();
    await vi.advanceTimersByTimeAsync(30);
    coalescer.request();
    await vi.advanceTimersByTimeAsync(30);
    await coalescer.flush();
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
  });

  it("on flush still delivers the latest request that was waiting for its interval", async () => {
    const seen: number[] = [];
    let latest = 0;
    const coalescer = createCoalescer({
      intervalMs: 60_000,
      task: async () => {
        seen.push(latest);
      },
      onError: () => {},
    });
    latest = 1;
    coalescer.request();
    await vi.advanceTimersByTimeAsync(20);
    latest = 3;
    coalescer.request();
    await coalescer.flush();
    expect(seen).toEqual([1, 3]);
  });

  it("goes on after a flush: a request made after it runs within its interval", async () => {
    let calls = 0;
    const coalescer = createCoalescer({
      intervalMs: 100,
      task: async () => {
        calls += 1;
      },
      onError: () => {},
    });
    coalescer.request();
    await coalescer.flush();
    expect(calls).toBe(1);
    coalescer.request();
    await vi.advanceTimersByTimeAsync(150);
    expect(calls).toBe(2);
  });
});
