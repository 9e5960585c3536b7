import { UsageError } from "./usage-error.ts";

/** `TAG=VALUE`, as in --binary ovn-kubernetes=./bin/ovn-kubernetes-tests-ext. */
export function parseTagAssignment(option: string, text: string): { tag: string; value: string } {
  const eq = text.indexOf("=");
  const tag = text.slice(0, eq).trim();
  const value = text.slice(eq + 1).trim();
  if (eq <= 0 || tag === "" || value === "") {
    throw new UsageError(
      `${option} expects TAG=VALUE (e.g. ${option} ovn-kubernetes=./ovn-kubernetes-tests-ext), got "${text}"`,
    );
  }
  if (!/^[a-z0-9][a-z0-9._-]*$/i.test(tag)) {
    throw new UsageError(`${option}: "${tag}" is not a payload tag name (letters, digits, '.', '_', '-')`);
  }
  return { tag, value };
}

/** A positive whole number within bounds. */
export function parseCount(option: string, text: string, { min = 1, max = 100_000 } = {}): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${option} expects a whole number from ${min} to ${max}, got "${text}"`);
  }
  return n;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `90s`, `15m`, `1h`, `1h30m` or plain seconds. */
export function parseDuration(option: string, text: string): number {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const parts = [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  const total = parts.reduce((sum, [, n, unit]) => sum + Number(n) * UNIT_MS[unit!]!, 0);
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== trimmed || total <= 0) {
    throw new UsageError(`${option} expects a duration such as 90s, 15m or 1h30m, got "${text}"`);
  }
  return Math.round(total);
}

/** `P0:P1`, two failure probabilities with P0 < P1 (e.g. 0.02:0.10): a rise in failure rate to detect. */
export function parseRateChange(option: string, text: string): { from: number; to: number } {
  const match = /^\s*(0?\.\d+|0|1)\s*:\s*(0?\.\d+|0|1)\s*$/.exec(text);
  const from = Number(match?.[1]);
  const to = Number(match?.[2]);
  if (!match || !(from < to)) {
    throw new UsageError(
      `${option} expects P0:P1, failure probabilities from 0 to 1 with P0 < P1 (e.g. ${option} 0.02:0.10), got "${text}"`,
    );
  }
  return { from, to };
}
