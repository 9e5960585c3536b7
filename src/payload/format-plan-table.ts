import type { ResolvedPlan } from "./resolved-plan.ts";

const short = (digest: string | null) => (digest ? `${digest.slice(0, 19)}…` : "-");

/** The plan as a human reads it: one row per component, then why each missing one is missing. */
export function formatPlanTable(plan: ResolvedPlan): string {
  const lines = [`payload  ${plan.payload.ref} (${plan.payload.name}, ${short(plan.payload.digest)})`];
  if (plan.baseline)
    lines.push(`baseline ${plan.baseline.ref} (${plan.baseline.name}, ${short(plan.baseline.digest)})`);
  lines.push(`arch     ${plan.arch}`, "");
  const header = ["TAG", "SOURCE", "AVAILABLE", "FOUND BY", "DIGEST", "COMMIT", "BINARY"];
  const rows = plan.components.map((c) => [
    c.tag,
    c.rebuiltFromSameSource
      ? `${c.source} (rebuilt, same source)`
      : c.binarySource && c.binarySource.gitTreeState !== "clean"
        ? `${c.source} (${c.binarySource.gitTreeState || "unknown"} tree)`
        : c.source,
    c.available ? "yes" : "no",
    c.discoveredBy ?? "-",
    short(c.digest),
    c.commit ? c.commit.slice(0, 12) : "-",
    c.binaryPath,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const row of [header, ...rows])
    lines.push(
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    );
  const missing = plan.components.filter((c) => !c.available);
  const runnable = plan.components.length - missing.length;
  lines.push("", `${runnable} of ${plan.components.length} components have a test binary for ${plan.arch}`);
  for (const c of missing) lines.push(`  ${c.tag}: ${c.reason ?? "unavailable"}`);
  // With `plan --images`: what to mirror for a disconnected cluster, per component.
  const inspected = plan.components.filter((c) => c.images !== undefined || c.imagesNote !== undefined);
  if (inspected.length > 0) lines.push("", `test images (${plan.arch})`);
  for (const c of inspected) {
    const images = c.images;
    lines.push(
      `  ${c.tag}: ${images ? `${images.length} image${images.length === 1 ? "" : "s"}` : "not known"}`,
    );
    for (const { image, mapped } of images ?? []) lines.push(`    ${image}${mapped ? ` → ${mapped}` : ""}`);
    if (c.imagesNote) lines.push(`    note: ${c.imagesNote}`);
  }
  return `${lines.join("\n")}\n`;
}
