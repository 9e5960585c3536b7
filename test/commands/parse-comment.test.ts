import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CommandLimits } from "../../src/commands/command.ts";
import { parseComment } from "../../src/commands/parse-comment.ts";
import { renderCommandErrors } from "../../src/commands/render-command-errors.ts";
import { renderHelp } from "../../src/commands/render-help.ts";

const limits: CommandLimits = {
  arches: ["amd64", "arm64"],
  maxIterations: 50,
  maxMore: 20,
  releases: {
    repositories: ["quay.io/openshift-release-dev/ocp-release"],
    streams: [{ name: "4.19", stream: "4.19.0-0.nightly" }],
  },
};
const kinds = (body: string) => parseComment(body, limits).commands.map((c) => c.kind);

describe("parseComment", () => {
  it("reads every option of /test network-stress", () => {
    const { commands, errors } = parseComment(
      '/test network-stress arch=x86_64,arm64 iterations=25 baseline=history focus="NodePort service"',
      limits,
    );
    expect(errors).toEqual([]);
    expect(commands).toEqual([
      expect.objectContaining({
        kind: "stress",
        line: 1,
        options: {
          arches: ["amd64", "arm64"],
          iterations: 25,
          baseline: "history",
          focus: "NodePort service",
        },
      }),
    ]);
  });

  it("reads suite=NAME and refuses what is not a suite name, saying how to write one", () => {
    const { commands } = parseComment(
      "/test network-stress suite=openshift/conformance/parallel iterations=5",
      limits,
    );
    expect(commands[0]).toMatchObject({
      kind: "stress",
      options: { suite: "openshift/conformance/parallel", iterations: 5 },
    });
    const { errors } = parseComment('/test network-stress suite="a suite; rm -rf /"', limits);
    expect(errors[0]).toMatchObject({
      option: "suite",
      problem: "is not a suite name",
      example: "/test network-stress suite=openshift/conformance/parallel",
    });
    expect(parseComment("/test network-stress suite=", limits).errors[0]?.problem).toBe("needs a value");
  });

  it("reads upgrade-from= naming an allowed release stream or release image, and refuses anything else, saying what is allowed", () => {
    const digest = `quay.io/openshift-release-dev/ocp-release@sha256:${"a".repeat(64)}`;
    for (const release of [digest, "quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64", "4.19"]) {
      const { commands, errors } = parseComment(
        `/test network-stress upgrade-from=${release} iterations=3`,
        limits,
      );
      expect(errors).toEqual([]);
      expect(commands[0]).toMatchObject({
        kind: "stress",
        options: { upgradeFrom: release, iterations: 3 },
      });
    }
    for (const bad of [
      "4.19.0",
      "4.19.0-0.nightly",
      "quay.io/ocp-release@sha256:123",
      '"quay.io/x:1; rm -rf /"',
      "quay.io/x:a;b",
      "https://quay.io/x:1",
      // Another repository of an allowed registry, a look-alike host, and an internal address.
      "quay.io/mallory/ocp-release:4.19.0-x86_64",
      "quay.io.evil.example/openshift-release-dev/ocp-release:4.19.0-x86_64",
      `169.254.169.254/openshift-release-dev/ocp-release@sha256:${"b".repeat(64)}`,
    ]) {
      const { commands, errors } = parseComment(`/test network-stress upgrade-from=${bad}`, limits);
      expect(commands).toEqual([]);
      expect(errors[0]).toMatchObject({
        option: "upgrade-from",
        problem: "is not a release this bot's operator allows",
        allowed:
          "a release stream: 4.19 (4.19.0-0.nightly); or a release image (tag or sha256 digest) of quay.io/openshift-release-dev/ocp-release",
        example: "/test network-stress upgrade-from=4.19",
      });
    }
    expect(parseComment("/test network-stress upgrade-from=", limits).errors[0]?.problem).toBe(
      "needs a value",
    );
    expect(renderHelp(limits)).toContain("[upgrade-from=RELEASE]");
    expect(renderHelp(limits)).toContain("a release stream: 4.19 (4.19.0-0.nightly)");
  });

  it("takes bare /test network-stress with no options, leaving them to the configuration", () => {
    expect(parseComment("/test network-stress", limits).commands[0]).toMatchObject({
      kind: "stress",
      options: {},
    });
  });

  it("finds several commands in one comment, each at the start of its own line", () => {
    const body = [
      "Thanks! Looks good.",
      "/ok-to-test",
      "/test network-stress iterations=5",
      "/retest",
      "/test ?",
      "/test network-stress more=10",
      "/test network-stress abort",
    ].join("\r\n");
    expect(kinds(body)).toEqual(["ok-to-test", "stress", "retest", "help", "more", "abort"]);
    expect(parseComment(body, limits).commands.map((c) => c.line)).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it("ignores commands inside code blocks, quotes, HTML comments, indented or mid-line", () => {
    const body = [
      "> /test network-stress",
      "```",
      "/test network-stress",
      "```",
      "~~~~ sh",
      "/retest",
      "~~~~",
      "    /test network-stress",
      " /retest",
      "<!-- /ok-to-test",
      "/test network-stress -->",
      "please /retest",
      "/test network-stressful",
      "/test e2e-aws",
      "/retest now",
    ].join("\n");
    expect(parseComment(body, limits)).toEqual({ commands: [], errors: [] });
  });

  it("treats an unclosed code fence as running to the end of the comment", () => {
    expect(kinds("/retest\n```\n/test network-stress\n")).toEqual(["retest"]);
  });

  it("counts a line after a closed fence again", () => {
    expect(kinds("```js\nx\n```\n/test network-stress")).toEqual(["stress"]);
  });

  it("rejects a bad option with the option, the allowed values and an example", () => {
    const { commands, errors } = parseComment("/retest\n/test network-stress iterations=500", limits);
    expect(commands.map((c) => c.kind)).toEqual(["retest"]);
    expect(errors).toEqual([
      {
        line: 2,
        text: "/test network-stress iterations=500",
        option: "iterations",
        value: "500",
        problem: "is not a number from 1 to 50",
        allowed: "a whole number from 1 to 50",
        example: "/test network-stress iterations=10",
      },
    ]);
  });

  it.each([
    ["arch=s390x", "arch", "amd64, arm64"],
    ["arch=", "arch", "amd64, arm64"],
    ["baseline=yesterday", "baseline", "payload, history, none"],
    ["iterations=0", "iterations", "a whole number from 1 to 50"],
    ["iterations=2.5", "iterations", "a whole number from 1 to 50"],
    ["more=21", "more", "a whole number from 1 to 20"],
    ["more=5 arch=amd64", "more", "more on its own"],
    ["abort now", "abort", "abort on its own"],
    ["iterations=5 iterations=6", "iterations", "iterations once"],
    [
      "colour=blue",
      "colour",
      "arch=…, iterations=…, baseline=…, focus=…, suite=…, upgrade-from=…, more=N or abort",
    ],
    ['focus="unclosed', "focus", 'key=value, or key="value with spaces"'],
    [
      `focus=${"x".repeat(201)}`,
      "focus",
      "text of 1 to 200 printable characters; quote it when it has spaces",
    ],
  ])("rejects %s naming %s", (args, option, allowed) => {
    const { commands, errors } = parseComment(`/test network-stress ${args}`, limits);
    expect(commands).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ option, allowed });
    expect(errors[0]!.example).toMatch(/^\/test network-stress /);
  });

  it("gives examples that are themselves valid commands", () => {
    const bad = ["arch=ppc64le", "iterations=99", "baseline=x", "focus=", "more=0", "abort x", "x=1"];
    for (const args of bad) {
      const [error] = parseComment(`/test network-stress ${args}`, limits).errors;
      const reparsed = parseComment(error!.example, limits);
      expect(reparsed.errors, error!.example).toEqual([]);
      expect(reparsed.commands).toHaveLength(1);
    }
  });
});

describe("parseComment under arbitrary text (fast-check)", () => {
  const commandWords = [
    "/test",
    "/retest",
    "/ok-to-test",
    "/test network-stress",
    "/test ?",
    "network-stress",
  ];
  const fragment = fc.oneof(
    fc.string(),
    fc.string({ unit: "grapheme" }),
    fc.constantFrom(...commandWords, "```", "~~~", "<!--", "-->", ">", "=", '"', "\r", "\n", " ", "\t"),
    fc.constantFrom("arch=", "iterations=", "more=", "focus=", "baseline=", "abort", "amd64", "50"),
  );
  const text = fc.array(fragment, { maxLength: 40 }).map((parts) => parts.join(""));

  it("never throws, and every command it finds stands at the start of a line of the text", () => {
    fc.assert(
      fc.property(text, (body) => {
        const { commands, errors } = parseComment(body, limits);
        const lines = body.split(/\r\n|\r|\n/);
        for (const found of [...commands, ...errors]) {
          const line = lines[found.line - 1]!;
          expect(line.startsWith("/")).toBe(true);
          expect(line.trim()).toBe(found.text);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("finds nothing in text where no line starts with a slash", () => {
    const noSlashStart = text.map((body) =>
      body
        .split(/\r\n|\r|\n/)
        .map((l) => (l.startsWith("/") ? `x${l}` : l))
        .join("\n"),
    );
    fc.assert(
      fc.property(noSlashStart, (body) => {
        expect(parseComment(body, limits)).toEqual({ commands: [], errors: [] });
      }),
      { numRuns: 3000 },
    );
  });

  it("finds nothing when the same text is quoted, fenced or indented", () => {
    const wrap = fc.constantFrom(
      (b: string) =>
        b
          .split(/\r\n|\r|\n/)
          .map((l) => `> ${l}`)
          .join("\n"),
      (b: string) =>
        b
          .split(/\r\n|\r|\n/)
          .map((l) => `    ${l}`)
          .join("\n"),
      (b: string) => `\`\`\`\`\`\`\`\`\`\`\n${b.replace(/`/g, "'")}\n\`\`\`\`\`\`\`\`\`\``,
    );
    fc.assert(
      fc.property(text, wrap, (body, wrapper) => {
        expect(parseComment(wrapper(body), limits)).toEqual({ commands: [], errors: [] });
      }),
      { numRuns: 2000 },
    );
  });

  it("reads back any valid command written among other lines", () => {
    const options = fc.record(
      {
        arches: fc.uniqueArray(fc.constantFrom("amd64" as const, "arm64" as const), { minLength: 1 }),
        iterations: fc.integer({ min: 1, max: 50 }),
        baseline: fc.constantFrom("payload" as const, "history" as const, "none" as const),
        focus: fc.stringMatching(/^[A-Za-z0-9:\-[\] ]{1,40}$/).filter((f) => f.trim() === f && f !== ""),
      },
      { requiredKeys: [] },
    );
    const noise = fc.array(
      fc.string().map((l) => l.replace(/^[/\s`~<]+/, "")),
      { maxLength: 3 },
    );
    fc.assert(
      fc.property(options, noise, noise, (opts, before, after) => {
        const args = [
          opts.arches && `arch=${opts.arches.join(",")}`,
          opts.iterations && `iterations=${opts.iterations}`,
          opts.baseline && `baseline=${opts.baseline}`,
          opts.focus && `focus="${opts.focus}"`,
        ].filter(Boolean);
        const body = [...before, `/test network-stress ${args.join(" ")}`, ...after].join("\n");
        const { commands, errors } = parseComment(body, limits);
        expect(errors).toEqual([]);
        expect(commands).toHaveLength(1);
        expect(commands[0]).toMatchObject({ kind: "stress", options: opts, line: before.length + 1 });
      }),
      { numRuns: 1000 },
    );
  });
});

describe("replies", () => {
  it("lists every command in the help, with this repository's limits", () => {
    const help = renderHelp(limits);
    for (const text of ["/test network-stress", "more=N", "abort", "/retest", "/ok-to-test", "/test ?"]) {
      expect(help).toContain(text);
    }
    expect(help).toContain("1 to 50");
    expect(help).toContain("arch=amd64,arm64");
  });

  it("names option, allowed values and an example, and keeps user text inside code spans", () => {
    const { errors } = parseComment("/test network-stress baseline=@everyone`ping`", limits);
    const reply = renderCommandErrors(errors);
    expect(reply).toContain("`baseline=@everyone'ping'` is not a baseline");
    expect(reply).toContain("Allowed: payload, history, none");
    expect(reply).toContain("Example: `/test network-stress baseline=payload`");
    expect(reply.replace(/`[^`]*`/g, "")).not.toContain("@everyone");
  });
});
