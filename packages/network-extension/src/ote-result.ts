import { formatOteTimestamp } from "@netstress/core/model/format-ote-timestamp.ts";
import { DISRUPTION_DETAIL_NAME, type Disruption } from "@netstress/core/model/disruption-schema.ts";

/** One result line of `run-test`, in openshift-tests-extension's format. */
export interface OteResultLine {
  name: string;
  lifecycle: "blocking" | "informing";
  duration: number;
  startTime: string;
  endTime: string;
  result: "passed" | "failed" | "skipped";
  output: string;
  error?: string;
  details?: { name: string; value: unknown }[];
}

/** A result: failed with `error`, else the outcome given; `disruption` goes into details[]. */
export function oteResult(options: {
  name: string;
  start: Date;
  end: Date;
  result: OteResultLine["result"];
  output: string;
  error?: string;
  disruption?: Disruption[];
}): OteResultLine {
  return {
    name: options.name,
    lifecycle: "blocking",
    duration: Math.max(0, options.end.getTime() - options.start.getTime()),
    startTime: formatOteTimestamp(options.start),
    endTime: formatOteTimestamp(options.end),
    result: options.result,
    output: options.output,
    ...(options.error !== undefined ? { error: options.error } : {}),
    ...(options.disruption ? { details: [{ name: DISRUPTION_DETAIL_NAME, value: options.disruption }] } : {}),
  };
}
