import type { Disruption, DisruptionInterval } from "@netstress/core/model/disruption-schema.ts";
import type { Connection, NetworkPath } from "@netstress/core/model/network-paths.ts";
import type { ProbeStateLine } from "./probe-line.ts";

/** A probe pair the deployment set up: this source probes this target over this path. */
export interface ExpectedPair {
  path: NetworkPath;
  connection: Connection;
  source: string;
  target: string;
}

/**
 * Disruption per path and kind of connection over the observed window, from the probe pods' state
 * lines. A pair is failing from the start of the probe that saw it fail to the start of the probe
 * that saw it reachable again (or the end of the window); a pair that never reported is failing
 * for the whole window. A path's disrupted time is the union of its pairs' failing intervals, and
 * every interval is listed with its source, target and reason. Pure.
 */
export function computeDisruption(options: {
  expected: readonly ExpectedPair[];
  lines: readonly ProbeStateLine[];
  window: { from: Date; to: Date };
  budgetSeconds: number;
}): Disruption[] {
  const from = options.window.from.getTime();
  const to = Math.max(from, options.window.to.getTime());
  const key = (p: { path: string; connection: string; source: string; target: string }) =>
    `${p.path}\u0000${p.connection}\u0000${p.source}\u0000${p.target}`;
  const byPair = new Map<string, ProbeStateLine[]>();
  for (const line of options.lines) {
    const list = byPair.get(key(line)) ?? [];
    list.push(line);
    byPair.set(key(line), list);
  }
  const groups = new Map<string, { path: NetworkPath; connection: Connection; pairs: ExpectedPair[] }>();
  for (const pair of options.expected) {
    const id = `${pair.path}\u0000${pair.connection}`;
    const group = groups.get(id) ?? { path: pair.path, connection: pair.connection, pairs: [] };
    group.pairs.push(pair);
    groups.set(id, group);
  }
  const iso = (ms: number) => new Date(ms).toISOString();
  const result: Disruption[] = [];
  for (const group of groups.values()) {
    const spans: { from: number; to: number; reason: string; source: string; target: string }[] = [];
    for (const pair of group.pairs) {
      const lines = [...(byPair.get(key(pair)) ?? [])].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
      if (lines.length === 0) {
        spans.push({ from, to, reason: "no probe result", source: pair.source, target: pair.target });
        continue;
      }
      // Before a pair's first line nothing was known; from its last line on, that state held to the end.
      let failingSince: { at: number; reason: string } | undefined;
      const close = (end: number) => {
        if (!failingSince) return;
        const start = Math.max(failingSince.at, from);
        const stop = Math.min(end, to);
        if (stop > start) {
          spans.push({
            from: start,
            to: stop,
            reason: failingSince.reason,
            source: pair.source,
            target: pair.target,
          });
        }
        failingSince = undefined;
      };
      for (const line of lines) {
        const at = Date.parse(line.at);
        if (line.ok) close(at);
        else if (!failingSince) failingSince = { at, reason: line.reason ?? "failed" };
      }
      close(to);
    }
    spans.sort((a, b) => a.from - b.from || a.to - b.to);
    let disrupted = 0;
    let reach = -Infinity;
    for (const span of spans) {
      if (span.to <= reach) continue;
      disrupted += span.to - Math.max(span.from, reach);
      reach = span.to;
    }
    const intervals: DisruptionInterval[] = spans.map((s) => ({
      from: iso(s.from),
      to: iso(s.to),
      reason: s.reason,
      source: s.source,
      target: s.target,
    }));
    result.push({
      path: group.path,
      connection: group.connection,
      observedSeconds: round((to - from) / 1000),
      disruptedSeconds: round(disrupted / 1000),
      budgetSeconds: options.budgetSeconds,
      intervals,
    });
  }
  return result;
}

const round = (seconds: number) => Math.round(seconds * 1000) / 1000;
