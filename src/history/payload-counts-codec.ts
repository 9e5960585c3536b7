/**
 * One payload's per-test counts as bytes. Header: dictionary generation (u32), number of test ids
 * (u32), the entry's common executions (u32) and common clusters (u32), all little-endian. Then per
 * test id one byte: 0–253, the test ran the common executions on the common clusters, never
 * flaked, and failed that many iterations; ABSENT, it did not run; ESCAPE, its executions,
 * failures, flakes and clusters follow as four unsigned LEB128 numbers. Nearly every test of a
 * payload runs as often as the others and fails fewer than 254 iterations, so 5,000 tests take
 * about 5 kB per payload.
 */
const HEADER_BYTES = 16;
const ABSENT = 0xff;
const ESCAPE = 0xfe;
const MAX_DIRECT_FAILURES = 0xfd;
/** Numbers kept per test id: executions, failures, flakes, clusters. */
export const FIELDS = 4;

export interface EncodedCounts {
  gen: number;
  /** Executions, failures, flakes and clusters per test id, interleaved; executions 0: it did not run. */
  counts: Uint32Array;
}

/** The most frequent (executions, clusters) of the tests that ran: what most tests share. */
function commonShape(counts: Uint32Array): [number, number] {
  const frequency = new Map<number, number>();
  let best: [number, number] = [0, 0];
  let bestCount = 0;
  for (let at = 0; at < counts.length; at += FIELDS) {
    const executions = counts[at]!;
    if (executions === 0) continue;
    const key = executions * 2 ** 20 + Math.min(counts[at + 3]!, 2 ** 20 - 1);
    const seen = (frequency.get(key) ?? 0) + 1;
    frequency.set(key, seen);
    if (seen > bestCount) [best, bestCount] = [[executions, counts[at + 3]!], seen];
  }
  return best;
}

function pushNumber(body: number[], value: number): void {
  let rest = value;
  while (rest >= 0x80) {
    body.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  body.push(rest);
}

export function encodePayloadCounts({ gen, counts }: EncodedCounts): Buffer {
  const size = counts.length / FIELDS;
  const [executions, clusters] = commonShape(counts);
  const body: number[] = [];
  for (let at = 0; at < counts.length; at += FIELDS) {
    const [runs, failures, flakes, seen] = [counts[at]!, counts[at + 1]!, counts[at + 2]!, counts[at + 3]!];
    if (runs === 0) body.push(ABSENT);
    else if (runs === executions && seen === clusters && flakes === 0 && failures <= MAX_DIRECT_FAILURES)
      body.push(failures);
    else {
      body.push(ESCAPE);
      for (const value of [runs, failures, flakes, seen]) pushNumber(body, value);
    }
  }
  const blob = Buffer.alloc(HEADER_BYTES + body.length);
  blob.writeUInt32LE(gen, 0);
  blob.writeUInt32LE(size, 4);
  blob.writeUInt32LE(executions, 8);
  blob.writeUInt32LE(clusters, 12);
  blob.set(body, HEADER_BYTES);
  return blob;
}

/** The counts of an encoded payload; a value cut short yields the ids it holds whole. */
export function decodePayloadCounts(blob: Buffer): EncodedCounts {
  const size = blob.readUInt32LE(4);
  const executions = blob.readUInt32LE(8);
  const clusters = blob.readUInt32LE(12);
  const counts = new Uint32Array(size * FIELDS);
  let offset = HEADER_BYTES;
  const readNumber = (): number | undefined => {
    let value = 0;
    for (let scale = 1; offset < blob.length; scale *= 0x80) {
      const byte = blob[offset++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
    }
    return undefined;
  };
  for (let id = 0; id < size && offset < blob.length; id++) {
    const byte = blob[offset++]!;
    const at = id * FIELDS;
    if (byte === ABSENT) continue;
    if (byte === ESCAPE) {
      const values = [readNumber(), readNumber(), readNumber(), readNumber()];
      if (values.some((value) => value === undefined)) break;
      counts.set(values as number[], at);
    } else {
      counts[at] = executions;
      counts[at + 1] = byte;
      counts[at + 3] = clusters;
    }
  }
  return { gen: blob.readUInt32LE(0), counts };
}

/** Bytes an encoded payload needs at least: anything shorter is not one. */
export const MINIMUM_ENCODED_BYTES = HEADER_BYTES;
