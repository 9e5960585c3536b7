import { readFile } from "node:fs/promises";
import { z } from "zod";

/** One component binary as the run manifest (run.json) records it. Every field is optional: the
 *  report shows what is there. */
const manifestComponentSchema = z.looseObject({
  component: z.string().optional(),
  arm: z.string().optional(),
  binary: z.string().optional(),
  sha256: z.string().optional(),
  digest: z.string().optional(),
  source: z.string().optional(),
  image: z.string().optional(),
  commit: z.string().optional(),
});

/**
 * The runner's run.json, read tolerantly: the plan (components per arm, or a flat list), seed,
 * iterations and status. Only the report reads it, to show which binary came from where.
 */
export const runManifestSchema = z.looseObject({
  seed: z.union([z.number(), z.string()]).optional(),
  iterations: z.number().optional(),
  status: z.string().optional(),
  arch: z.string().optional(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  components: z.array(manifestComponentSchema).optional(),
  arms: z
    .array(z.looseObject({ arm: z.string().optional(), components: z.array(manifestComponentSchema).optional() }))
    .optional(),
  plan: z
    .looseObject({
      arms: z
        .array(z.looseObject({ arm: z.string().optional(), components: z.array(manifestComponentSchema).optional() }))
        .optional(),
      components: z.array(manifestComponentSchema).optional(),
    })
    .optional(),
});
export type RunManifest = z.infer<typeof runManifestSchema>;
export type ManifestComponent = z.infer<typeof manifestComponentSchema>;

/** The components of a manifest as flat rows, each with its arm when the manifest says it. */
export function manifestComponents(manifest: RunManifest): ManifestComponent[] {
  const arms = [...(manifest.arms ?? []), ...(manifest.plan?.arms ?? [])];
  return [
    ...(manifest.components ?? []),
    ...(manifest.plan?.components ?? []),
    ...arms.flatMap((arm) => (arm.components ?? []).map((component) => ({ arm: arm.arm, ...component }))),
  ];
}

export type ManifestRead = { manifest: RunManifest } | { manifest: null; note: string };

/** Reads run.json when it exists; absent or unreadable is a note for the report, never an error. */
export async function readRunManifest(path: string): Promise<ManifestRead> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return { manifest: null, note: "no run.json next to the results: the plan is unknown" };
  }
  try {
    const parsed = runManifestSchema.safeParse(JSON.parse(text));
    if (parsed.success) return { manifest: parsed.data };
    return { manifest: null, note: `run.json is not a run manifest: ${parsed.error.issues[0]?.message ?? "invalid"}` };
  } catch (error) {
    return { manifest: null, note: `run.json is not JSON: ${(error as Error).message}` };
  }
}
