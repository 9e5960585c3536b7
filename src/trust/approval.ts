import { z } from "zod";

/** A trusted user's /ok-to-test on a PR: who, and which head commit they looked at. */
export const approvalSchema = z.object({
  approver: z.string(),
  headSha: z.string(),
  at: z.string(),
});
export type Approval = z.infer<typeof approvalSchema>;
