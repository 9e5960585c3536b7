import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResultsAggregator } from "../../src/analysis/results-aggregator.ts";
import { forEachJsonlLine, type JsonlItem } from "../../src/report/read-jsonl-lines.ts";
import { emptyInputReport, readResults } from "../../src/report/read-results.ts";
import { createJsonStringShrinker } from "../../src/report/shrink-long-json-strings.ts";
import { makeRecord } from "../analysis/make-records.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "netstress-jsonl-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function readAll(path: string, options = {}): Promise<JsonlItem[]> {
  const items: JsonlItem[] = [];
  await forEachJsonlLine(path, (item) => items.push(item), options);
  return items;
}

function shrink(text: string, maxStringBytes: number, chunkSize = 3): string {
  const shrinker = createJsonStringShrinker({ maxStringBytes });
  const bytes = Buffer.from(text);
  for (let start = 0; start < bytes.length; start += chunkSize)
    shrinker.write(bytes.subarray(start, start + chunkSize));
  return shrinker.text();
}

describe("JSON string shrinker", () => {
  it("cuts long strings but keeps the document valid JSON with every other field intact", () => {
    const record = {
      name: "t",
      output: "x".repeat(1000),
      arm: "pr",
      nested: { error: "y".repeat(50) },
      iteration: 7,
    };
    const shrunk = JSON.parse(shrink(JSON.stringify(record), 16));
    expect(shrunk.output).toMatch(/^x{16} \[… 984 bytes cut\]$/);
    expect(shrunk.nested.error).toMatch(/^y{16} \[… 34 bytes cut\]$/);
    expect(shrunk).toMatchObject({ name: "t", arm: "pr", iteration: 7 });
  });

  it("never cuts inside an escape sequence or a multi-byte character", () => {
    const tricky = `${"é".repeat(10)}\\"\\u00e9\\n${"\u{1F600}".repeat(5)}`;
    for (let limit = 0; limit < 40; limit++) {
      for (const chunkSize of [1, 2, 5]) {
        const text = shrink(
          JSON.stringify({ output: JSON.parse(`"${tricky}"`), after: "kept" }),
          limit,
          chunkSize,
        );
        const parsed = JSON.parse(text);
        expect(Object.keys(parsed)).toEqual(["output", "after"]);
        expect(parsed.output).not.toContain("\uFFFD");
      }
    }
  });
});

describe("reading JSONL", () => {
  it("numbers lines, skips blank ones and tolerates a missing final newline and CRLF", async () => {
    const path = join(dir, "small.jsonl");
    await writeFile(path, '{"a":1}\r\n\n  \n{"a":2}\n{"a":3}');
    const items = await readAll(path);
    expect(items.map((item) => ("text" in item ? [item.number, JSON.parse(item.text).a] : null))).toEqual([
      [1, 1],
      [4, 2],
      [5, 3],
    ]);
  });

  it("reads lines that span many read chunks", async () => {
    const path = join(dir, "chunks.jsonl");
    const long = JSON.stringify({ output: "z".repeat(3 << 20) });
    await writeFile(path, `${long}\n{"b":1}\n`);
    const items = await readAll(path, { maxLineBytes: 8 << 20 });
    expect(items).toHaveLength(2);
    expect("text" in items[0]! && JSON.parse(items[0].text).output.length).toBe(3 << 20);
  });

  it("reads a result record with a 100 MB output field without holding it, and counts it", async () => {
    const path = join(dir, "huge.jsonl");
    const [head, tail] = JSON.stringify(
      makeRecord({ name: "huge", result: "failed", error: "timed out", iteration: 3, output: "@OUTPUT@" }),
    ).split("@OUTPUT@");
    const stream = createWriteStream(path);
    stream.write(head);
    const block = "0123456789abcdef".repeat(1 << 16); // 1 MiB
    for (let i = 0; i < 100; i++) if (!stream.write(block)) await once(stream, "drain");
    stream.write(`${tail}\n${JSON.stringify(makeRecord({ name: "next" }))}\n`);
    stream.end();
    await once(stream, "finish");

    const aggregator = createResultsAggregator();
    const report = emptyInputReport();
    const before = process.memoryUsage().rss;
    await readResults({ files: [path], role: "pr", aggregator, report });
    const grown = process.memoryUsage().rss - before;
    expect(report).toMatchObject({ lines: 2, malformed: 0, shrunk: 1 });
    const huge = aggregator.finish().tests.find((test) => test.name === "huge")!;
    expect(huge.pr).toMatchObject({ runs: 1, failures: 1 });
    expect(huge.pr?.firstFailure).toMatchObject({ iteration: 3, message: "timed out" });
    expect(grown).toBeLessThan(60 << 20);
  });

  it("gives up on a line that stays huge after shrinking, and goes on with the next", async () => {
    const path = join(dir, "many-strings.jsonl");
    const many = JSON.stringify({ details: Array.from({ length: 20_000 }, (_, i) => `s${i}`) });
    await writeFile(path, `${many}\n{"ok":true}\n`);
    const items = await readAll(path, { maxLineBytes: 1024, maxShrunkBytes: 4096 });
    expect(items[0]).toEqual({ number: 1, tooLong: true });
    expect(items[1]).toMatchObject({ number: 2, text: '{"ok":true}' });
  });
});
