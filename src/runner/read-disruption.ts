import {
  DISRUPTION_DETAIL_NAME,
  MAX_DISRUPTION_INTERVALS,
  disruptionSchema,
  type Disruption,
} from "@netstress/core/model/disruption-schema.ts";

/** The result record's fields: spread into the record as they are. */
export interface ReadDisruption {
  /** The valid entries, in the order reported; absent when the result reported none. */
  disruption?: Disruption[];
  /** Why entries were dropped or cut, one line each; absent when all were kept as reported. */
  harnessNotes?: string[];
}

const MAX_NOTES = 10;

function describeIssue(error: { issues: readonly { path: PropertyKey[]; message: string }[] }): string {
  const issue = error.issues[0];
  if (!issue) return "invalid";
  const where = issue.path.map(String).join(".");
  return where ? `${where}: ${issue.message}` : issue.message;
}

/**
 * The `netstress.disruption` entries of an OTE result's `details`, validated (pure). A malformed
 * entry is dropped with a reason in `notes`, never thrown: a test's result must survive a bad
 * detail. A value given as a JSON string is read as JSON; several `netstress.disruption` details are
 * concatenated; a path and connection reported twice keeps its first entry. The result is the
 * record's `disruption` and `harnessNotes` fields, ready to spread into it.
 */
export function readDisruption({ details }: { details: unknown }): ReadDisruption {
  if (!Array.isArray(details)) return {};
  const notes: string[] = [];
  const note = (line: string) => {
    if (notes.length < MAX_NOTES) notes.push(line);
    else if (notes.length === MAX_NOTES) notes.push("further disruption notes left out");
  };
  let found = false;
  const entries: Disruption[] = [];
  const seen = new Set<string>();
  for (const detail of details) {
    if (typeof detail !== "object" || detail === null) continue;
    const { name, value } = detail as { name?: unknown; value?: unknown };
    if (name !== DISRUPTION_DETAIL_NAME) continue;
    found = true;
    let list = value;
    if (typeof list === "string") {
      try {
        list = JSON.parse(list) as unknown;
      } catch {
        note(`${DISRUPTION_DETAIL_NAME}: its value is a string that is not JSON; dropped`);
        continue;
      }
    }
    if (!Array.isArray(list)) {
      note(`${DISRUPTION_DETAIL_NAME}: its value is not an array of disruption entries; dropped`);
      continue;
    }
    list.forEach((raw: unknown, index) => {
      const parsed = disruptionSchema.safeParse(raw);
      if (!parsed.success) {
        note(`${DISRUPTION_DETAIL_NAME}[${index}] dropped: ${describeIssue(parsed.error)}`);
        return;
      }
      const entry = parsed.data;
      const key = `${entry.path} ${entry.connection}`;
      if (seen.has(key)) {
        note(`${DISRUPTION_DETAIL_NAME}[${index}] dropped: ${key} was already reported`);
        return;
      }
      seen.add(key);
      if (entry.intervals.length > MAX_DISRUPTION_INTERVALS) {
        const omitted = entry.intervals.length - MAX_DISRUPTION_INTERVALS + (entry.intervalsOmitted ?? 0);
        note(`${key}: ${omitted} interval(s) beyond the first ${MAX_DISRUPTION_INTERVALS} not kept`);
        entries.push({
          ...entry,
          intervals: entry.intervals.slice(0, MAX_DISRUPTION_INTERVALS),
          intervalsOmitted: omitted,
        });
      } else entries.push(entry);
    });
  }
  return {
    ...(found ? { disruption: entries } : {}),
    ...(notes.length > 0 ? { harnessNotes: notes } : {}),
  };
}
