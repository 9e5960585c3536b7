import { Command, type Redis } from "ioredis";

/** A connection that stops reaching Redis after a number of round trips. */
export interface CutRedis {
  /** Whether a round trip was held back. */
  readonly cut: boolean;
  /** Resolves once Redis answered every command sent before the cut: what it holds is final. */
  settled(): Promise<void>;
}

/**
 * Lets a connection's first `trips` round trips through (a pipeline or MULTI is one), then fails
 * every later command without sending it: Redis is left as a process that died at that point
 * leaves it, and the caller's code runs on to its end instead of hanging.
 */
export function cutRedisAfter(redis: Redis, trips: number): CutRedis {
  const send = redis.sendCommand.bind(redis);
  // A pipeline's commands are sent one by one and written together: its fate is decided once.
  const pipelines = new WeakMap<object, boolean>();
  let passed = 0;
  let fence: Promise<unknown> | undefined;
  const passes = () => {
    if (passed < trips) {
      passed++;
      return true;
    }
    // Redis answers a connection's commands in order: once this one is answered, so are all before.
    if (!fence) {
      const ping = new Command("ping");
      send(ping);
      fence = ping.promise;
    }
    return false;
  };
  redis.sendCommand = ((command, stream, ...rest) => {
    let through: boolean;
    if (stream && typeof stream === "object") {
      through = pipelines.get(stream) ?? passes();
      pipelines.set(stream, through);
    } else {
      through = passes();
    }
    if (through) return send(command, stream, ...rest);
    command.reject(new Error("connection cut"));
    return command.promise;
  }) as Redis["sendCommand"];
  return {
    get cut() {
      return fence !== undefined;
    },
    settled: async () => void (await fence),
  };
}
