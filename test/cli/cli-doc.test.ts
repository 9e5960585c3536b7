import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DOC_PATH, renderCliHelp, withCliHelp } from "../../scripts/generate-cli-doc.ts";

const doc = readFileSync(DOC_PATH, "utf8");

describe("docs/cli.md", () => {
  it("has every command's --help as the command line prints it (npx tsx scripts/generate-cli-doc.ts)", async () => {
    expect(doc).toContain(await renderCliHelp());
    expect(await withCliHelp(doc)).toBe(doc);
  });

  it("explains every flag of netstress run", async () => {
    const help = await renderCliHelp();
    const runHelp = help.slice(help.indexOf("### `netstress run`"), help.indexOf("### `netstress analyze`"));
    const flags = [...runHelp.matchAll(/^ {2}(?:-\w, )?(--[\w-]+)/gm)].map(([, flag]) => flag!);
    const explained = doc.slice(0, doc.indexOf("## Every command's flags"));
    expect(flags.filter((flag) => flag !== "--help" && !explained.includes(`\`${flag}`))).toEqual([]);
  });
});
