import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterEach, describe, expect, inject, it } from "vitest";
import { z } from "zod";
import { createHistoryStore } from "../../src/history/history-store.ts";
import { createRunAnalyzer } from "../../src/history/run-analyzer.ts";
import type { ShardExecutor } from "../../src/runs/shard-executor.ts";
import { eventually } from "../helpers/github-api.ts";
import { commentPayload } from "../helpers/github-payloads.ts";
import { startTestBot, type TestBot } from "../helpers/github-test-bot.ts";

/**
 * The request body of GitHub's "Update a check run" (`PATCH /repos/{owner}/{repo}/check-runs/{id}`)
 * as its OpenAPI description gives it, the output and its annotations: at most 50 annotations per
 * request, each with path, start_line, end_line, annotation_level and message (≤ 64 KB); title ≤ 255
 * characters; start_column/end_column only on one line.
 */
const annotationSchema = z
  .strictObject({
    path: z.string().min(1),
    start_line: z.int().min(1),
    end_line: z.int().min(1),
    start_column: z.int().optional(),
    end_column: z.int().optional(),
    annotation_level: z.enum(["notice", "warning", "failure"]),
    message: z
      .string()
      .min(1)
      .max(64 * 1024),
    title: z.string().max(255).optional(),
    raw_details: z
      .string()
      .max(64 * 1024)
      .optional(),
  })
  .refine((a) => a.end_line >= a.start_line)
  .refine((a) => (a.start_column === undefined && a.end_column === undefined) || a.start_line === a.end_line);
const checkRunUpdateSchema = z.object({
  name: z.string().optional(),
  details_url: z.string().optional(),
  external_id: z.string().optional(),
  status: z.enum(["queued", "in_progress", "completed"]).optional(),
  conclusion: z
    .enum(["action_required", "cancelled", "failure", "neutral", "success", "skipped", "timed_out"])
    .optional(),
  output: z
    .object({
      title: z.string(),
      summary: z.string(),
      text: z.string().optional(),
      annotations: z.array(annotationSchema).max(50).optional(),
    })
    .optional(),
});

const IN_REPO = "/go/src/github.com/openshift/ovn-kubernetes";
const REGRESSED = 60;

/** Results of one shard: REGRESSED tests failing every PR iteration and passing in the baseline, plus two more. */
function executorWritingResults(): ShardExecutor {
  return {
    name: "test",
    arches: async () => ["amd64"],
    async execute({ outDir }) {
      await mkdir(outDir, { recursive: true });
      const specs = [
        ...Array.from({ length: REGRESSED }, (_, i) => ({
          name: `[sig-network] service ${i} answers on its NodePort`,
          codeLocations: [`${IN_REPO}/test/e2e/service.go:20`, `${IN_REPO}/test/e2e/service.go:${100 + i}`],
        })),
        // Another repository's spec, and one only in a vendored copy: nothing to annotate here.
        {
          name: "[sig-network] origin's test fails too",
          codeLocations: ["/go/src/github.com/openshift/origin/test/extended/networking/egress.go:42"],
        },
        {
          name: "[sig-network] vendored test fails too",
          codeLocations: [`${IN_REPO}/vendor/k8s.io/kubernetes/test/e2e/network/dns.go:77`],
        },
      ];
      const lines = [];
      for (const arm of ["pr", "baseline"] as const) {
        for (let iteration = 0; iteration < 10; iteration++) {
          for (const spec of specs) {
            const failed = arm === "pr";
            lines.push({
              name: spec.name,
              lifecycle: "blocking",
              duration: 1000,
              result: failed ? "failed" : "passed",
              output: "",
              ...(failed ? { error: `connection refused on iteration ${iteration}` } : {}),
              arm,
              arch: "amd64",
              iteration,
              attempt: 0,
              component: "ovn-kubernetes",
              codeLocations: spec.codeLocations,
            });
          }
        }
      }
      const resultsPath = join(outDir, "results.jsonl");
      await writeFile(resultsPath, lines.map((line) => JSON.stringify(line)).join("\n") + "\n");
      return { status: "completed", resultsPath, records: lines.length };
    },
  };
}

let t: TestBot | undefined;
let redis: Redis | undefined;
afterEach(async () => {
  await t?.stop();
  await redis?.quit();
  t = undefined;
  redis = undefined;
});

describe("check run annotations", () => {
  it("annotates each regressed test on its own source line in the PR's repository, 50 per request", async () => {
    const queuePrefix = `annotations-${randomUUID()}`;
    redis = new Redis(inject("redisUrl"));
    t = await startTestBot({
      github: { members: ["alice"] },
      settings: { queuePrefix },
      executor: executorWritingResults(),
      analyze: createRunAnalyzer({
        history: createHistoryStore({ redis, prefix: queuePrefix }),
        log: pino({ level: "silent" }),
      }),
    });
    await t.deliver("issue_comment", commentPayload({ body: "/test network-stress iterations=10" }));
    const batches = await eventually(() => {
      const annotated = t!.github
        .checkRunWrites()
        .filter((w) => w.method === "PATCH" && (w.body.output as { annotations?: unknown })?.annotations);
      return annotated.length === 2 && annotated;
    }, 30_000);
    expect(t.github.latestCheckRuns().get(1000)).toMatchObject({ conclusion: "failure" });
    const bodies = batches.map((b) => checkRunUpdateSchema.parse(b.body));
    const annotations = bodies.flatMap((b) => b.output!.annotations!);
    expect(bodies.map((b) => b.output!.annotations!.length)).toEqual([50, 10]);
    expect(annotations.map((a) => a.path)).toEqual(Array(REGRESSED).fill("test/e2e/service.go"));
    expect(annotations.map((a) => a.start_line).sort((a, b) => a - b)).toEqual(
      Array.from({ length: REGRESSED }, (_, i) => 100 + i),
    );
    const seven = annotations.find((a) => a.start_line === 107)!;
    expect(seven).toMatchObject({
      end_line: 107,
      annotation_level: "failure",
      title: "[sig-network] service 7 answers on its NodePort",
    });
    expect(seven.message).toBe(
      "Regressed: failed 10 of 10 PR iterations, the baseline 0 of 10.\n\nFirst failure (iteration 0):\nconnection refused on iteration 0",
    );
    // Sent once: later publishes of the concluded run add none.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(
      t.github.checkRunWrites().filter((w) => (w.body.output as { annotations?: unknown })?.annotations),
    ).toHaveLength(2);
  });
});
