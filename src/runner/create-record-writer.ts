import { createWriteStream } from "node:fs";
import { once } from "node:events";
import type { ResultRecord } from "./result-record.ts";

export interface RecordWriter {
  /** Queues one record; resolves at once unless the file is behind (then when it has caught up). */
  write: (record: ResultRecord) => void | Promise<void>;
  /** Writes what is queued and closes the file. */
  close: () => Promise<void>;
}

/**
 * results.jsonl, one record per line, written in batches: one write per record cost more of the
 * runner's CPU than starting the test that produced it. What a crash can lose is bounded by
 * `flushMs` and `maxQueuedBytes`; every line is whole.
 */
export function createRecordWriter(options: {
  path: string;
  flushMs?: number;
  maxQueuedBytes?: number;
}): RecordWriter {
  const { flushMs = 100, maxQueuedBytes = 256 * 1024 } = options;
  const file = createWriteStream(options.path);
  let queued: string[] = [];
  let queuedBytes = 0;
  let timer: NodeJS.Timeout | undefined;
  /** Set while the file is behind: the writes that follow wait for it. */
  let drained: Promise<void> | undefined;

  const flush = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (queued.length === 0) return;
    if (!file.write(queued.join("")) && !drained) {
      drained = once(file, "drain").then(() => {
        drained = undefined;
      });
    }
    queued = [];
    queuedBytes = 0;
  };

  return {
    write(record) {
      const line = `${JSON.stringify(record)}\n`;
      queued.push(line);
      queuedBytes += line.length;
      if (queuedBytes >= maxQueuedBytes) flush();
      else timer ??= setTimeout(flush, flushMs);
      return drained;
    },
    async close() {
      flush();
      file.end();
      await once(file, "finish");
    },
  };
}
