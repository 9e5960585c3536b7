import { parseArch, type Arch } from "@netstress/core/arch/arch.ts";
import { BASELINES, type Baseline } from "@netstress/core/model/baselines.ts";
import {
  FOCUS_MAX_LENGTH,
  PULLSPEC_MAX_LENGTH,
  STRESS_COMMAND,
  SUITE_MAX_LENGTH,
  SUITE_NAME,
  type Command,
  type CommandError,
  type CommandLimits,
  type StressOptions,
} from "./command.ts";
import { chooseRelease } from "./choose-release.ts";
import { commandLines } from "./command-lines.ts";
import { describeAllowedReleases } from "./describe-allowed-releases.ts";

export interface ParsedComment {
  commands: Command[];
  errors: CommandError[];
}

type Located = { line: number; text: string };
type BadOption = Omit<CommandError, "line" | "text">;

const OPTION_NAMES = ["arch", "iterations", "baseline", "focus", "suite", "upgrade-from"] as const;
/** Where each option goes in StressOptions. */
const OPTION_KEYS: Record<(typeof OPTION_NAMES)[number], keyof StressOptions> = {
  arch: "arches",
  iterations: "iterations",
  baseline: "baseline",
  focus: "focus",
  suite: "suite",
  "upgrade-from": "upgradeFrom",
};
const OPTIONS_HINT = `${OPTION_NAMES.map((o) => `${o}=…`).join(", ")}, more=N or abort`;

/**
 * Finds every command in a comment body. Pure and total: any text yields a result, never an
 * exception. Only lines that start with a command word count; a line whose options are wrong yields
 * an error instead of a command, and the other lines of the comment are unaffected.
 */
export function parseComment(body: string, limits: CommandLimits): ParsedComment {
  const commands: Command[] = [];
  const errors: CommandError[] = [];
  for (const { line, text } of commandLines(body)) {
    const at: Located = { line, text: text.trim() };
    const match = /^(\/\S+)(?:[ \t]+(.*))?$/.exec(text.trimEnd());
    if (!match) continue;
    const word = match[1]!.toLowerCase();
    const rest = (match[2] ?? "").trim();
    if (word === "/retest" && rest === "") commands.push({ kind: "retest", ...at });
    else if (word === "/ok-to-test" && rest === "") commands.push({ kind: "ok-to-test", ...at });
    else if (word === "/test") {
      const [job = "", ...more] = rest.split(/[ \t]+/);
      if (job === "?" && more.length === 0) commands.push({ kind: "help", ...at });
      else if (job.toLowerCase() === "network-stress") {
        const args = rest.slice(job.length).trim();
        const result = parseStressArguments(args, limits);
        if ("command" in result) commands.push({ ...result.command, ...at });
        else errors.push({ ...result.error, ...at });
      }
    }
  }
  return { commands, errors };
}

type StressCommand =
  { kind: "stress"; options: StressOptions } | { kind: "more"; iterations: number } | { kind: "abort" };

function parseStressArguments(
  args: string,
  limits: CommandLimits,
): { command: StressCommand } | { error: BadOption } {
  const tokens = tokenize(args);
  if ("error" in tokens) return tokens;
  const list = tokens.tokens;
  const alone = (name: string): BadOption => ({
    option: name,
    problem: "cannot be combined with other options",
    allowed: `${name} on its own`,
    example: name === "abort" ? `${STRESS_COMMAND} abort` : `${STRESS_COMMAND} more=10`,
  });
  if (list.some((t) => t.key === "abort")) {
    return list.length === 1 && list[0]!.value === undefined
      ? { command: { kind: "abort" } }
      : { error: alone("abort") };
  }
  if (list.some((t) => t.key === "more")) {
    if (list.length !== 1) return { error: alone("more") };
    const iterations = parseCountValue("more", list[0]!.value, limits.maxMore);
    return typeof iterations === "number" ? { command: { kind: "more", iterations } } : { error: iterations };
  }
  const options: StressOptions = {};
  for (const token of list) {
    const known = (OPTION_NAMES as readonly string[]).includes(token.key);
    if (!known) {
      return {
        error: {
          option: token.key,
          ...(token.value !== undefined ? { value: token.value } : {}),
          problem: `is not an option of ${STRESS_COMMAND}`,
          allowed: OPTIONS_HINT,
          example: `${STRESS_COMMAND} arch=amd64 iterations=20`,
        },
      };
    }
    const name = token.key as (typeof OPTION_NAMES)[number];
    const key = OPTION_KEYS[name];
    if (options[key] !== undefined) {
      return {
        error: {
          option: name,
          problem: "is given twice",
          allowed: `${name} once`,
          example: exampleFor(name, limits),
        },
      };
    }
    const value = parseOptionValue(name, token.value, limits);
    if (!value.ok) return { error: value.error };
    Object.assign(options, { [key]: value.value });
  }
  return { command: { kind: "stress", options } };
}

type ValueResult = { ok: true; value: Arch[] | number | Baseline | string } | { ok: false; error: BadOption };

function parseOptionValue(
  name: (typeof OPTION_NAMES)[number],
  value: string | undefined,
  limits: CommandLimits,
): ValueResult {
  const bad = (problem: string, allowed: string): ValueResult => ({
    ok: false,
    error: {
      option: name,
      ...(value !== undefined ? { value } : {}),
      problem,
      allowed,
      example: exampleFor(name, limits),
    },
  });
  switch (name) {
    case "arch": {
      const allowed = limits.arches.join(", ");
      if (!value) return bad("needs a value", allowed);
      const arches: Arch[] = [];
      const notRun = "names an architecture this repository does not run";
      for (const part of value.split(",")) {
        let arch: Arch;
        try {
          arch = parseArch(part);
        } catch {
          return bad(notRun, allowed);
        }
        if (!limits.arches.includes(arch)) return bad(notRun, allowed);
        if (!arches.includes(arch)) arches.push(arch);
      }
      return { ok: true, value: arches };
    }
    case "iterations": {
      const count = parseCountValue("iterations", value, limits.maxIterations);
      return typeof count === "number" ? { ok: true, value: count } : { ok: false, error: count };
    }
    case "baseline": {
      const baseline = BASELINES.find((b) => b === value?.toLowerCase());
      return baseline
        ? { ok: true, value: baseline }
        : bad(value ? "is not a baseline" : "needs a value", BASELINES.join(", "));
    }
    case "focus": {
      const allowed = `text of 1 to ${FOCUS_MAX_LENGTH} printable characters; quote it when it has spaces`;
      if (!value) return bad("needs a value", allowed);
      if (value.length > FOCUS_MAX_LENGTH || /[\p{Cc}\p{Cf}]/u.test(value))
        return bad("is too long or has control characters", allowed);
      return { ok: true, value };
    }
    case "suite": {
      const allowed = `a suite name the test binaries advertise (letters, digits, '.', '_', '-', '/'; up to ${SUITE_MAX_LENGTH})`;
      if (!value) return bad("needs a value", allowed);
      if (value.length > SUITE_MAX_LENGTH || !SUITE_NAME.test(value))
        return bad("is not a suite name", allowed);
      return { ok: true, value };
    }
    case "upgrade-from": {
      // Clusters install what this names (with cluster-admin, on shared clusters too): only releases.
      const allowed = describeAllowedReleases(limits.releases);
      if (!value) return bad("needs a value", allowed);
      if (value.length > PULLSPEC_MAX_LENGTH || !chooseRelease(value, limits.releases))
        return bad("is not a release this bot's operator allows", allowed);
      return { ok: true, value };
    }
  }
}

function parseCountValue(option: string, value: string | undefined, max: number): number | BadOption {
  const n = Number(value);
  if (value !== undefined && /^\d{1,6}$/.test(value) && n >= 1 && n <= max) return n;
  return {
    option,
    ...(value !== undefined ? { value } : {}),
    problem: value === undefined ? "needs a number" : `is not a number from 1 to ${max}`,
    allowed: `a whole number from 1 to ${max}`,
    example: `${STRESS_COMMAND} ${option}=${Math.min(10, max)}`,
  };
}

function exampleFor(name: (typeof OPTION_NAMES)[number], limits: CommandLimits): string {
  switch (name) {
    case "arch":
      return `${STRESS_COMMAND} arch=${limits.arches.slice(0, 2).join(",")}`;
    case "iterations":
      return `${STRESS_COMMAND} iterations=${Math.min(10, limits.maxIterations)}`;
    case "baseline":
      return `${STRESS_COMMAND} baseline=payload`;
    case "focus":
      return `${STRESS_COMMAND} focus="EgressIP"`;
    case "suite":
      return `${STRESS_COMMAND} suite=openshift/conformance/parallel`;
    case "upgrade-from": {
      const { streams, repositories } = limits.releases;
      const release = streams[0]?.name ?? (repositories[0] ? `${repositories[0]}:4.19.0-x86_64` : "4.19");
      return `${STRESS_COMMAND} upgrade-from=${release}`;
    }
  }
}

interface Token {
  key: string;
  value?: string;
}

/** `key=value`, `key="value with spaces"` and bare words, separated by blanks. */
function tokenize(args: string): { tokens: Token[] } | { error: BadOption } {
  const tokens: Token[] = [];
  for (const part of args.matchAll(/([^\s="]+)(?:=(?:"([^"]*)"|([^\s"]*)))?(?=\s|$)|\S+/g)) {
    const [whole, key, quoted, plain] = part;
    if (key === undefined) {
      return {
        error: {
          option: whole.split("=")[0] || whole,
          value: whole,
          problem: "cannot be read (an unclosed quote?)",
          allowed: 'key=value, or key="value with spaces"',
          example: `${STRESS_COMMAND} focus="NodePort service"`,
        },
      };
    }
    const value = quoted ?? plain;
    tokens.push({ key: key.toLowerCase(), ...(value !== undefined ? { value } : {}) });
  }
  return { tokens };
}
