/**
 * How a step of the execute stage ended when the run cannot go on: "ended", the run ended
 * meanwhile (or a step concluded it); "stopped", the run's signal stopped it (see
 * ExecuteContext.stop); or a failure the run concludes with.
 */
export type StepEnd = "ended" | "stopped" | { failure: string };
