import { z } from "zod";
import { CONNECTIONS, NETWORK_PATHS } from "@netstress/core/model/network-paths.ts";

/**
 * What a probe pod prints on stdout, one JSON object a line, and the extension reads back through
 * the pod log: when its server listens, when its checker starts, and one `state` line each time a
 * probe pair (source pod → target, over one path and kind of connection) changes between
 * reachable and failing. `at` is when the probe that saw the change started.
 */
export const probeLineSchema = z.discriminatedUnion("event", [
  z.object({
    netstress: z.literal("probe"),
    event: z.literal("listening"),
    port: z.number(),
    at: z.string(),
  }),
  z.object({
    netstress: z.literal("probe"),
    event: z.literal("checking"),
    targets: z.number(),
    at: z.string(),
  }),
  z.object({
    netstress: z.literal("probe"),
    event: z.literal("state"),
    path: z.enum(NETWORK_PATHS),
    connection: z.enum(CONNECTIONS),
    source: z.string(),
    target: z.string(),
    ok: z.boolean(),
    reason: z.string().optional(),
    at: z.string(),
  }),
  z.object({ netstress: z.literal("probe"), event: z.literal("stopped"), at: z.string() }),
]);
export type ProbeLine = z.infer<typeof probeLineSchema>;
export type ProbeStateLine = Extract<ProbeLine, { event: "state" }>;

/** The probe lines of a pod log; other lines (runtime noise, warnings) are passed over. */
export function parseProbeLines(log: string): ProbeLine[] {
  const lines: ProbeLine[] = [];
  for (const raw of log.split("\n")) {
    const text = raw.trim();
    if (!text.startsWith("{") || !text.includes('"netstress":"probe"')) continue;
    try {
      const parsed = probeLineSchema.safeParse(JSON.parse(text));
      if (parsed.success) lines.push(parsed.data);
    } catch {
      // a line cut short by the log limit: not a probe line
    }
  }
  return lines;
}
