import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import type { OmittedArtifact } from "../runner/iteration-artifacts.ts";
import {
  armSchema,
  resultRecordSchema,
  type Arm,
  type ResultRecord,
} from "@netstress/core/model/result-record.ts";

/**
 * The in-pod runner's stdout protocol. A pod log mixes the runner's records with whatever else
 * reaches stdout or stderr, and may be cut short (a killed container, a rotated log), so every
 * record line carries a marker and a sequence number, and the stream ends with a trailer that
 * states the count:
 *
 *   @@netstress/v1 0 {"name":…}
 *   @@netstress/v1 1 {"name":…}
 *   @@netstress/v1 file 0 {"arm":"pr","component":"ovn-kubernetes","path":"flows.txt","offset":0,"size":5,"sha256":"…"} aGVsbG8=
 *   @@netstress/v1 omitted {"arm":"pr","component":"ovn-kubernetes","path":"big.pcap","size":9000000,"reason":"…"}
 *   @@netstress/v1 end 2 completed
 *
 * After the records and before the trailer come the artifact files the binaries wrote, in chunks
 * of at most FILE_CHUNK_BYTES (one line each, numbered on their own), and the files that did not
 * fit the pod's budget. A file is whole when its chunks cover its size in order and its SHA-256
 * matches; otherwise it is dropped with a reason, and the records stay as they are.
 *
 * A build-farm runner signs its stream (createStreamSigner) with its Job's key (deriveStreamKey):
 * each line becomes `@@netstress/v2 <mac> <body>`, the body as above and the MAC chained over the
 * previous line's, so that a line added, changed, dropped, reordered or taken from another Job's
 * stream does not verify. The local executor (no key) writes and reads unsigned /v1 lines.
 */
export const STREAM_MARKER = "@@netstress/v1";
export const SIGNED_STREAM_MARKER = "@@netstress/v2";
/** Every version's marker starts so: with a key, any such line must verify. */
const MARKER_FAMILY = "@@netstress/";
/** Hex digits of a line's MAC: HMAC-SHA256 cut to 128 bits. */
const MAC_HEX_DIGITS = 32;

export const STREAM_STATUSES = ["completed", "cancelled"] as const;
export type StreamStatus = (typeof STREAM_STATUSES)[number];

/** Raw bytes per file line: 43,692 base64 characters, so a line stays under 48 KiB. */
export const FILE_CHUNK_BYTES = 32 * 1024;
/** Longest artifact path the protocol carries (characters). */
export const MAX_STREAM_PATH = 1024;

export function formatRecordLine(sequence: number, record: ResultRecord): string {
  return `${STREAM_MARKER} ${sequence} ${JSON.stringify(record)}\n`;
}

export function formatStreamTrailer(count: number, status: StreamStatus): string {
  return `${STREAM_MARKER} end ${count} ${status}\n`;
}

const fileHeaderSchema = z.strictObject({
  arm: armSchema,
  component: z.string().min(1).max(253),
  path: z.string().min(1).max(MAX_STREAM_PATH),
  offset: z.number().int().nonnegative(),
  size: z
    .number()
    .int()
    .nonnegative()
    .max(2 ** 40),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type FileChunkHeader = z.infer<typeof fileHeaderSchema>;

const omittedLineSchema = z.strictObject({
  arm: armSchema.optional(),
  component: z.string().max(253).optional(),
  path: z.string().max(MAX_STREAM_PATH).optional(),
  size: z.number().int().nonnegative().optional(),
  reason: z.string().max(1000),
});

/** One file of `content`, as the lines that carry it (one line for an empty file). */
export function formatFileLines(input: {
  firstSequence: number;
  arm: Arm;
  component: string;
  path: string;
  content: Buffer;
}): string[] {
  const { content } = input;
  const sha256 = createHash("sha256").update(content).digest("hex");
  const lines: string[] = [];
  for (let offset = 0; offset === 0 || offset < content.length; offset += FILE_CHUNK_BYTES) {
    const header: FileChunkHeader = {
      arm: input.arm,
      component: input.component,
      path: input.path,
      offset,
      size: content.length,
      sha256,
    };
    const chunk = content.subarray(offset, offset + FILE_CHUNK_BYTES).toString("base64");
    lines.push(
      `${STREAM_MARKER} file ${input.firstSequence + lines.length} ${JSON.stringify(header)} ${chunk}\n`,
    );
  }
  return lines;
}

export function formatOmittedLine(omitted: OmittedArtifact): string {
  return `${STREAM_MARKER} omitted ${JSON.stringify(omitted)}\n`;
}

/**
 * Signs the stream lines the format functions make, one line per call, in the order they are
 * written: mac = HMAC-SHA256(key, previous line's mac + " " + body), the first line's "previous"
 * being empty.
 */
export function createStreamSigner(key: Buffer): (line: string) => string {
  const prefix = `${STREAM_MARKER} `;
  let previous = "";
  return (line) => {
    if (!line.startsWith(prefix) || !line.endsWith("\n") || line.indexOf("\n") !== line.length - 1)
      throw new Error("only whole stream lines are signed, one at a time");
    previous = lineMac(key, previous, line.slice(prefix.length, -1));
    return `${SIGNED_STREAM_MARKER} ${previous} ${line.slice(prefix.length)}`;
  };
}

function lineMac(key: Buffer, previous: string, body: string): string {
  return createHmac("sha256", key).update(`${previous} ${body}`).digest("hex").slice(0, MAC_HEX_DIGITS);
}

/** A file that arrived whole. */
export interface StreamedFile {
  arm: Arm;
  component: string;
  /** As the pod named it: not checked yet (see safeArtifactPath). */
  path: string;
  content: Buffer;
}

interface StreamedArtifacts {
  files: StreamedFile[];
  /** Files the pod said it left out, and files that arrived cut, corrupt or over the limit. */
  omitted: OmittedArtifact[];
}

export type ParsedRecordStream = StreamedArtifacts &
  (
    | { complete: true; status: StreamStatus; records: ResultRecord[] }
    /** `problem` says why the stream cannot be trusted as a whole; `records` holds what arrived intact. */
    | { complete: false; problem: string; records: ResultRecord[] }
    /**
     * Signed streams only: something other than the runner wrote stream lines into its output.
     * `tampered`: among lines that verify (the runner's stream was there, and was added to or
     * changed); `unsigned`: no line verifies (all forged, or signed with another key). Nothing of
     * such a stream counts: no records, no files.
     */
    | { complete: false; forged: "tampered" | "unsigned"; problem: string; records: [] }
  );

const RECORD_LINE = /^(\d+) (.*)$/s;
const SIGNED_BODY = new RegExp(`^([0-9a-f]{${MAC_HEX_DIGITS}}) (.*)$`, "s");
const TRAILER_LINE = /^end (\d+) (\w+)$/;
const FILE_LINE_START = /^file (\d+) /;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The collector's default bound on the file bytes it assembles from one pod log. */
export const DEFAULT_MAX_STREAMED_FILE_BYTES = 16 * 1024 * 1024;

/**
 * Reads a pod log: records in order, and whether the stream is whole; the artifact files that
 * arrived whole (at most `maxFileBytes` of them in all) and why others did not. Other lines are
 * noise. With `key` (a build-farm Job's), only signed lines count, each verified in its place in
 * the chain, and a stream with any marker line that does not verify is forged as a whole.
 */
export function parseRecordStream(
  log: string,
  options: { maxFileBytes?: number; key?: Buffer } = {},
): ParsedRecordStream {
  const { key } = options;
  const records: ResultRecord[] = [];
  const files = createFileAssembler(options.maxFileBytes ?? DEFAULT_MAX_STREAMED_FILE_BYTES);
  /** Lines that verified, the last one's MAC, and the first marker line that did not (counting from 1). */
  let verified = 0;
  let previous = "";
  let firstForged: number | undefined;
  let markerLines = 0;
  /** Set once the stream is decided (cut, broken, whole); later lines are only checked for forgery. */
  let decided: ParsedRecordStream | undefined;
  const broken = (problem: string): ParsedRecordStream => ({
    complete: false,
    problem,
    records,
    ...files.finish(),
  });
  const forged = (): ParsedRecordStream => ({
    complete: false,
    forged: verified > 0 ? "tampered" : "unsigned",
    problem:
      verified > 0
        ? `stream line ${firstForged} does not carry its runner's signature, though other lines do: something else wrote into the runner's output, or lines were changed, dropped or reordered`
        : `none of its ${markerLines} stream lines carries its Job's signature: something else wrote them, or they were signed with another key`,
    records: [],
    files: [],
    omitted: [],
  });
  const family = key ? MARKER_FAMILY : `${STREAM_MARKER} `;
  const signedPrefix = `${SIGNED_STREAM_MARKER} `;
  for (const line of log.split("\n")) {
    if (!line.startsWith(family)) continue;
    let body: string;
    if (key) {
      markerLines += 1;
      const signed = line.startsWith(signedPrefix)
        ? SIGNED_BODY.exec(line.slice(signedPrefix.length).replace(/\r$/, ""))
        : null;
      const mac = signed && lineMac(key, previous, signed[2]!);
      if (!signed || !timingSafeEqual(Buffer.from(signed[1]!), Buffer.from(mac!))) {
        firstForged ??= markerLines;
        // After lines that verify, only the last line of an unfinished stream may be one cut short.
        if (verified > 0 && (decided || firstForged !== markerLines)) return forged();
        continue;
      }
      verified += 1;
      if (firstForged !== undefined) return forged();
      previous = mac!;
      body = signed[2]!;
    } else body = line.slice(family.length).replace(/\r$/, "");
    // Past the end (or a break) of a signed stream, lines are read only to find forged ones.
    decided ??= readLine(body);
  }
  if (firstForged !== undefined && (verified === 0 || firstForged !== markerLines)) return forged();
  if (firstForged !== undefined)
    return broken(`its last line does not verify over what arrived of it (the stream was cut)`);
  return (
    decided ??
    broken(
      records.length === 0
        ? "the runner wrote no records and no end-of-stream trailer"
        : `no end-of-stream trailer after ${records.length} records (the stream was cut)`,
    )
  );

  /** Takes one stream line's body; returns how the stream ends when this line decides it. */
  function readLine(body: string): ParsedRecordStream | undefined {
    if (body.startsWith("file ")) return void files.chunk(body);
    if (body.startsWith("omitted ")) return void files.omitted(body.slice("omitted ".length));
    const trailer = TRAILER_LINE.exec(body);
    if (trailer) {
      const count = Number(trailer[1]);
      const status = STREAM_STATUSES.find((s) => s === trailer[2]);
      if (!status) return broken(`the stream ended with an unknown status "${trailer[2]}"`);
      if (count !== records.length) {
        return broken(`the trailer counts ${count} records but ${records.length} arrived`);
      }
      return { complete: true, status, records, ...files.finish() };
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
    return undefined;
  }
}

interface Pending {
  header: FileChunkHeader;
  chunks: Buffer[];
  received: number;
}

/** Puts files together from their chunk lines; whatever cannot be trusted becomes a reason. */
function createFileAssembler(maxBytes: number) {
  const files: StreamedFile[] = [];
  const omitted: OmittedArtifact[] = [];
  const pending = new Map<string, Pending>();
  /** Files already decided (kept or dropped): later chunks of theirs are ignored. */
  const decided = new Set<string>();
  let nextSequence = 0;
  let kept = 0;
  const keyOf = (h: { arm: Arm; component: string; path: string }) => `${h.arm}\0${h.component}\0${h.path}`;
  const drop = (h: FileChunkHeader, reason: string) => {
    const key = keyOf(h);
    pending.delete(key);
    decided.add(key);
    omitted.push({ arm: h.arm, component: h.component, path: h.path, size: h.size, reason });
  };
  return {
    chunk(body: string) {
      const start = FILE_LINE_START.exec(body);
      const rest = start ? body.slice(start[0].length) : "";
      const space = rest.lastIndexOf(" ");
      const match =
        start && space > 0 ? [body, start[1], rest.slice(0, space), rest.slice(space + 1)] : undefined;
      if (!match) {
        omitted.push({ reason: `file line ${nextSequence} is not framed (the line was cut)` });
        nextSequence += 1;
        return;
      }
      const sequence = Number(match[1]);
      if (sequence !== nextSequence) {
        omitted.push({
          reason: `file line${sequence - nextSequence > 1 ? `s ${nextSequence}–${sequence - 1} were` : ` ${nextSequence} was`} lost`,
        });
      }
      nextSequence = sequence + 1;
      let value: unknown;
      try {
        value = JSON.parse(match[2]!);
      } catch {
        omitted.push({ reason: `file line ${sequence} has a header that is not JSON` });
        return;
      }
      const parsed = fileHeaderSchema.safeParse(value);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        omitted.push({
          reason: `file line ${sequence} has a bad header (${issue?.path.join(".")}: ${issue?.message})`,
        });
        return;
      }
      const header = parsed.data;
      const key = keyOf(header);
      if (decided.has(key)) {
        if (header.offset === 0) drop(header, "streamed twice: the first copy is kept");
        return;
      }
      if (!BASE64.test(match[3]!)) return drop(header, `chunk at byte ${header.offset} is not base64`);
      const bytes = Buffer.from(match[3]!, "base64");
      const file = pending.get(key) ?? { header, chunks: [], received: 0 };
      if (header.offset !== file.received)
        return drop(header, `cut: the chunk at byte ${file.received} was lost`);
      if (header.size !== file.header.size || header.sha256 !== file.header.sha256)
        return drop(header, "its chunks disagree about its size or checksum");
      if (file.received + bytes.length > header.size)
        return drop(header, `corrupt: more than its ${header.size} bytes arrived`);
      if (kept + header.size > maxBytes)
        return drop(header, `over the collector's limit of ${maxBytes} bytes per iteration`);
      file.chunks.push(bytes);
      file.received += bytes.length;
      pending.set(key, file);
      if (file.received < header.size) return;
      const content = Buffer.concat(file.chunks);
      if (createHash("sha256").update(content).digest("hex") !== header.sha256)
        return drop(header, "corrupt: its SHA-256 does not match");
      pending.delete(key);
      decided.add(key);
      kept += content.length;
      files.push({ arm: header.arm, component: header.component, path: header.path, content });
    },
    omitted(json: string) {
      let value: unknown;
      try {
        value = JSON.parse(json);
      } catch {
        omitted.push({ reason: "a line listing a left-out file was cut" });
        return;
      }
      const parsed = omittedLineSchema.safeParse(value);
      omitted.push(parsed.success ? parsed.data : { reason: "a line listing a left-out file is malformed" });
    },
    finish(): StreamedArtifacts {
      const cut = [...pending.values()].map(({ header: h, received }): OmittedArtifact => ({
        arm: h.arm,
        component: h.component,
        path: h.path,
        size: h.size,
        reason: `cut: ${received} of its ${h.size} bytes arrived`,
      }));
      return { files: [...files], omitted: [...omitted, ...cut] };
    },
  };
}
