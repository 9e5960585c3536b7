import { oteTimestampPattern } from "./schemas.ts";

/** Parses `YYYY-MM-DD HH:MM:SS.ffffff UTC` into a Date (millisecond precision), or undefined. */
export function parseOteTimestamp(text: string): Date | undefined {
  if (!oteTimestampPattern.test(text)) return undefined;
  const [date, time] = text.split(" ");
  const [hms, fraction = ""] = (time ?? "").split(".");
  const ms = (fraction + "000").slice(0, 3);
  const parsed = new Date(`${date}T${hms}.${ms}Z`);
  return Number.isNaN(parsed.getTime()) ? undefined : parsed;
}
