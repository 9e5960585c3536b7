import { z } from "zod";

// The OTE result's own fields a result record carries, here rather than with the rest of the OTE
// wire formats (ote/schemas.ts) so that the record's schema needs nothing above the model floor.

export const lifecycleSchema = z.enum(["blocking", "informing"]);
export type Lifecycle = z.infer<typeof lifecycleSchema>;

export const oteResultValueSchema = z.enum(["passed", "failed", "skipped"]);
export type OteResultValue = z.infer<typeof oteResultValueSchema>;

/** Why the harness, not the binary, decided a result (the binary gave none that could be used). */
export const harnessErrorSchema = z.enum([
  "no-result",
  "malformed-result",
  "timeout",
  "crashed",
  "output-limit",
  "unexpected-result",
]);
export type HarnessError = z.infer<typeof harnessErrorSchema>;
