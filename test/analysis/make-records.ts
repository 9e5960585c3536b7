import type { ResultRecord } from "@netstress/core/model/result-record.ts";

/** A result record as the runner writes it, with the fields a test cares about overridden. */
export function makeRecord(overrides: Partial<ResultRecord> & Pick<ResultRecord, "name">): ResultRecord {
  return {
    lifecycle: "blocking",
    duration: 1200,
    startTime: "2024-06-11 10:00:00.000000 UTC",
    endTime: "2024-06-11 10:00:01.200000 UTC",
    result: "passed",
    output: "",
    arm: "pr",
    arch: "amd64",
    iteration: 0,
    attempt: 0,
    component: "ovn-kubernetes",
    source: "override",
    ...overrides,
  };
}

/**
 * Records for one test in one arm: `failed` iterations fail (no retry), `flaked` fail then pass on
 * a retry, the rest pass. Failures come first so that tests can reason about iterations.
 */
export function armRecords({
  name,
  arm,
  runs,
  failed = 0,
  flaked = 0,
  lifecycle = "blocking",
  component = "ovn-kubernetes",
}: {
  name: string;
  arm: "pr" | "baseline";
  runs: number;
  failed?: number;
  flaked?: number;
  lifecycle?: "blocking" | "informing";
  component?: string;
}): ResultRecord[] {
  const records: ResultRecord[] = [];
  for (let iteration = 0; iteration < runs; iteration++) {
    const base = {
      name,
      arm,
      iteration,
      lifecycle,
      component,
      source: arm === "pr" ? "override" : "released",
    } as const;
    if (iteration < failed) {
      records.push(makeRecord({ ...base, result: "failed", error: `boom in iteration ${iteration}` }));
    } else if (iteration < failed + flaked) {
      records.push(makeRecord({ ...base, result: "failed", error: "transient" }));
      records.push(makeRecord({ ...base, attempt: 1, result: "passed" }));
    } else {
      records.push(makeRecord({ ...base }));
    }
  }
  return records;
}

/** Records of one test in one arm: `failedPerCluster[k]` of the `perCluster` iterations on cluster k fail. */
export function clusteredRecords({
  name,
  arm,
  failedPerCluster,
  perCluster = 4,
  label = true,
}: {
  name: string;
  arm: "pr" | "baseline";
  failedPerCluster: number[];
  perCluster?: number;
  label?: boolean;
}): ResultRecord[] {
  return failedPerCluster.flatMap((failed, cluster) =>
    Array.from({ length: perCluster }, (_, index) =>
      makeRecord({
        name,
        arm,
        iteration: cluster * perCluster + index,
        result: index < failed ? "failed" : "passed",
        ...(label ? { cluster: `${arm}-cluster-${cluster}` } : {}),
      }),
    ),
  );
}
