import type { Redis } from "ioredis";

/** What a counted connection sent: round trips, and the commands of each (a pipeline is one trip). */
export interface RedisRoundTrips {
  /** One entry per round trip: its command names (several for a pipeline or MULTI). */
  readonly trips: string[][];
  reset(): void;
}

/**
 * Counts the round trips a connection makes from now on. ioredis hands every command to
 * `sendCommand`; the commands of one pipeline (MULTI included) share the writer they are sent
 * through and go out in one write, so they count once.
 */
export function countRedisRoundTrips(redis: Redis): RedisRoundTrips {
  const trips: string[][] = [];
  const pipelines = new WeakMap<object, string[]>();
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command, stream, ...rest) => {
    const name = command.name.toUpperCase();
    if (stream && typeof stream === "object") {
      let trip = pipelines.get(stream);
      if (!trip) {
        pipelines.set(stream, (trip = []));
        trips.push(trip);
      }
      trip.push(name);
    } else {
      trips.push([name]);
    }
    return send(command, stream, ...rest);
  }) as Redis["sendCommand"];
  return {
    trips,
    reset: () => trips.splice(0),
  };
}
