import type { RunProgress } from "./run-plan.ts";

export interface ProgressReporter {
  update(progress: RunProgress): void;
  finish(progress: RunProgress): void;
}

/**
 * On a terminal: one live bar (done/total, failures, ETA), redrawn at most 10 times a second.
 * Elsewhere (CI logs, pods): a plain line every `intervalMs`, so logs stay readable.
 */
export function createProgressReporter(options: {
  stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  label?: string;
  intervalMs?: number;
  now?: () => number;
}): ProgressReporter {
  const { stream, label = "", intervalMs = 10_000, now = Date.now } = options;
  const started = now();
  let lastDraw = 0;
  const tty = stream.isTTY === true;

  const line = (p: RunProgress): string => {
    const elapsed = now() - started;
    const eta =
      p.done > 0 && p.done < p.total ? formatDuration(((p.total - p.done) * elapsed) / p.done) : "—";
    const counts = `${p.done}/${p.total} tests, ${p.failed} failed, ETA ${eta}`;
    if (!tty) return `${label}${counts}`;
    const width = Math.max(10, Math.min(40, (stream.columns ?? 80) - counts.length - label.length - 4));
    const filled = p.total === 0 ? width : Math.round((p.done / p.total) * width);
    return `${label}[${"█".repeat(filled)}${"░".repeat(width - filled)}] ${counts}`;
  };

  return {
    update(p) {
      const t = now();
      if (t - lastDraw < (tty ? 100 : intervalMs)) return;
      lastDraw = t;
      stream.write(tty ? `\r\x1b[2K${line(p)}` : `${line(p)}\n`);
    },
    finish(p) {
      stream.write(tty ? `\r\x1b[2K${line(p)}\n` : `${line(p)}\n`);
    },
  };
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}
