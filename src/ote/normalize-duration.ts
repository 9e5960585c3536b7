import { parseOteTimestamp } from "./parse-ote-timestamp.ts";

/** Leeway for clock granularity and rounding between a reported duration and the time it spans. */
const SLACK_MS = 1_000;

/**
 * A reported `duration` in milliseconds. openshift-tests-extension's subprocess fallback writes
 * nanoseconds; a duration longer than the time the result spans (its start and end time, else the
 * invocation's own wall time) cannot be milliseconds, and becomes nanoseconds scaled down when that
 * fits the span, else the span itself.
 */
export function normalizeDuration(options: {
  duration: number;
  startTime?: string;
  endTime?: string;
  /** How long the invocation that reported it ran. */
  observedMs: number;
}): number {
  const { duration } = options;
  // Within the slack it fits any span: no time stamps to parse (most no-op and unit tests).
  if (duration <= SLACK_MS) return duration;
  const start = options.startTime ? parseOteTimestamp(options.startTime) : undefined;
  const end = options.endTime ? parseOteTimestamp(options.endTime) : undefined;
  const span =
    start && end && end.getTime() >= start.getTime() ? end.getTime() - start.getTime() : options.observedMs;
  if (duration <= span + SLACK_MS) return duration;
  const fromNanoseconds = duration / 1e6;
  return Math.round(
    Math.abs(fromNanoseconds - span) <= Math.max(SLACK_MS, span / 10) ? fromNanoseconds : span,
  );
}
