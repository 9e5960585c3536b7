import { SimError } from "./sim-error.ts";

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** A Go `time.Duration` string ("8h", "1h30m", "45s"), as Hive's lifetimes and delete-after take, in milliseconds. */
export function parseGoDuration(text: string, what: string): number {
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text) {
    throw new SimError(
      `${what} ${JSON.stringify(text)} is not a duration: write it as Go does, e.g. 8h, 1h30m or 90s`,
    );
  }
  return parts.reduce((ms, [, value, unit]) => ms + Number(value) * UNIT_MS[unit!]!, 0);
}
