import type { Arch } from "@netstress/core/arch/arch.ts";
import type { Baseline } from "@netstress/core/model/baselines.ts";
import type { AllowedReleases } from "./allowed-releases.ts";

/** Options of `/test network-stress`; what is omitted comes from the repository's configuration. */
export interface StressOptions {
  arches?: Arch[];
  iterations?: number;
  baseline?: Baseline;
  focus?: string;
  /** A suite the test binaries advertise (`info`), e.g. openshift/conformance/parallel. */
  suite?: string;
  /**
   * An upgrade run: both arms' clusters start at this release (an allowed stream's name or a
   * release repository's pullspec) and their [Upgrade] tests upgrade them to the arm's own payload.
   */
  upgradeFrom?: string;
}

/** A recognised comment command, with where it stood in the comment. */
export type Command = (
  | { kind: "stress"; options: StressOptions }
  | { kind: "more"; iterations: number }
  | { kind: "abort" }
  | { kind: "help" }
  | { kind: "retest" }
  | { kind: "ok-to-test" }
) & { line: number; text: string };

/** What a command may ask for; set by the repository's configuration and the operator's releases. */
export interface CommandLimits {
  arches: readonly Arch[];
  maxIterations: number;
  maxMore: number;
  /** What upgrade-from= may name. */
  releases: AllowedReleases;
}

/** One bad option of one command line: enough to write a reply that says how to fix it. */
export interface CommandError {
  line: number;
  text: string;
  option: string;
  value?: string;
  problem: string;
  allowed: string;
  example: string;
}

export const STRESS_COMMAND = "/test network-stress";
export const FOCUS_MAX_LENGTH = 200;
export const SUITE_MAX_LENGTH = 200;
export const PULLSPEC_MAX_LENGTH = 500;
/** A release image pullspec: registry host, repository path, and a tag or a sha256 digest. */
export const RELEASE_PULLSPEC =
  /^[A-Za-z0-9][A-Za-z0-9.-]*(:\d{1,5})?(\/[a-z0-9][a-z0-9._-]*)+(:[A-Za-z0-9_][A-Za-z0-9._-]{0,127}|@sha256:[a-f0-9]{64})$/;
/** Suite names as openshift-tests-extension binaries spell them: path-like words. */
export const SUITE_NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;
