import { resultRecordSchema, type ResultRecord } from "../runner/result-record.ts";

/**
 * The in-pod runner's stdout protocol. A pod log mixes the runner's records with whatever else
 * reaches stdout or stderr, and may be cut short (a killed container, a rotated log), so every
 * record line carries a marker and a sequence number, and the stream ends with a trailer that
 * states the count:
 *
 *   @@netstress/v1 0 {"name":…}
 *   @@netstress/v1 1 {"name":…}
 *   @@netstress/v1 end 2 completed
 */
export const STREAM_MARKER = "@@netstress/v1";

export const STREAM_STATUSES = ["completed", "cancelled"] as const;
export type StreamStatus = (typeof STREAM_STATUSES)[number];

export function formatRecordLine(sequence: number, record: ResultRecord): string {
  return `${STREAM_MARKER} ${sequence} ${JSON.stringify(record)}\n`;
}

export function formatStreamTrailer(count: number, status: StreamStatus): string {
  return `${STREAM_MARKER} end ${count} ${status}\n`;
}

export type ParsedRecordStream =
  | { complete: true; status: StreamStatus; records: ResultRecord[] }
  /** `problem` says why the stream cannot be trusted as a whole; `records` holds what arrived intact. */
  | { complete: false; problem: string; records: ResultRecord[] };

const RECORD_LINE = /^(\d+) (.*)$/s;
const TRAILER_LINE = /^end (\d+) (\w+)$/;

/** Reads a pod log: records in order, and whether the stream is whole. Other lines are noise. */
export function parseRecordStream(log: string): ParsedRecordStream {
  const records: ResultRecord[] = [];
  const broken = (problem: string): ParsedRecordStream => ({ complete: false, problem, records });
  const prefix = `${STREAM_MARKER} `;
  for (const line of log.split("\n")) {
    if (!line.startsWith(prefix)) continue;
    const body = line.slice(prefix.length).replace(/\r$/, "");
    const trailer = TRAILER_LINE.exec(body);
    if (trailer) {
      const count = Number(trailer[1]);
      const status = STREAM_STATUSES.find((s) => s === trailer[2]);
      if (!status) return broken(`the stream ended with an unknown status "${trailer[2]}"`);
      if (count !== records.length) {
        return broken(`the trailer counts ${count} records but ${records.length} arrived`);
      }
      return { complete: true, status, records };
    }
    const match = RECORD_LINE.exec(body);
    if (!match) return broken(`record ${records.length} is not framed as "<sequence> <json>"`);
    const sequence = Number(match[1]);
    if (sequence !== records.length) {
      return broken(`record ${records.length} was expected but record ${sequence} arrived`);
    }
    let value: unknown;
    try {
      value = JSON.parse(match[2]!);
    } catch {
      return broken(`record ${sequence} is not complete JSON (the line was cut)`);
    }
    const parsed = resultRecordSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return broken(
        `record ${sequence} is not a result record (${issue?.path.join(".")}: ${issue?.message})`,
      );
    }
    records.push(parsed.data);
  }
  return broken(
    records.length === 0
      ? "the runner wrote no records and no end-of-stream trailer"
      : `no end-of-stream trailer after ${records.length} records (the stream was cut)`,
  );
}
