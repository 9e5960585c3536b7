/**
 * One pooled run's per-test counts as bytes. Header: dictionary generation (u32), number of test
 * ids (u32), the run's common iteration count (u16), all little-endian. Then one byte per test id:
 * 0–253, the test ran the common count and failed that many iterations; ABSENT, it did not run;
 * ESCAPE, its runs and passes follow as two u16. Nearly every test of a stress run runs every
 * iteration and fails fewer than 254, so a run of 5,000 tests takes about 5 kB.
 */
const HEADER_BYTES = 10;
const ABSENT = 0xff;
const ESCAPE = 0xfe;
const MAX_DIRECT_FAILURES = 0xfd;

export interface RunCounts {
  gen: number;
  /** Runs and passes per test id, interleaved; runs 0 means the test did not run. */
  counts: Uint16Array;
}

/** The most frequent non-zero runs value: what most tests of the run share. */
function commonRuns(counts: Uint16Array): number {
  const frequency = new Map<number, number>();
  let best = 0;
  let bestCount = 0;
  for (let id = 0; id < counts.length; id += 2) {
    const runs = counts[id]!;
    if (runs === 0) continue;
    const seen = (frequency.get(runs) ?? 0) + 1;
    frequency.set(runs, seen);
    if (seen > bestCount) [best, bestCount] = [runs, seen];
  }
  return best;
}

export function encodeRunCounts({ gen, counts }: RunCounts): Buffer {
  const size = counts.length / 2;
  const common = commonRuns(counts);
  const body: number[] = [];
  for (let id = 0; id < size; id++) {
    const runs = counts[id * 2]!;
    const passes = counts[id * 2 + 1]!;
    if (runs === 0) body.push(ABSENT);
    else if (runs === common && runs - passes <= MAX_DIRECT_FAILURES) body.push(runs - passes);
    else body.push(ESCAPE, runs & 0xff, runs >> 8, passes & 0xff, passes >> 8);
  }
  const blob = Buffer.alloc(HEADER_BYTES + body.length);
  blob.writeUInt32LE(gen, 0);
  blob.writeUInt32LE(size, 4);
  blob.writeUInt16LE(common, 8);
  blob.set(body, HEADER_BYTES);
  return blob;
}

/** The counts of an encoded run; a value cut short yields the ids it holds whole. */
export function decodeRunCounts(blob: Buffer): RunCounts {
  const size = blob.readUInt32LE(4);
  const common = blob.readUInt16LE(8);
  const counts = new Uint16Array(size * 2);
  let offset = HEADER_BYTES;
  for (let id = 0; id < size && offset < blob.length; id++) {
    const byte = blob[offset++]!;
    if (byte === ABSENT) continue;
    if (byte === ESCAPE) {
      if (offset + 4 > blob.length) break;
      counts[id * 2] = blob.readUInt16LE(offset);
      counts[id * 2 + 1] = blob.readUInt16LE(offset + 2);
      offset += 4;
    } else {
      counts[id * 2] = common;
      counts[id * 2 + 1] = common - byte;
    }
  }
  return { gen: blob.readUInt32LE(0), counts };
}

/** Bytes an encoded run needs at least: anything shorter is not one. */
export const MINIMUM_ENCODED_BYTES = HEADER_BYTES;
