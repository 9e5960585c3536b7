import type { CommandError } from "./command.ts";

/** One reply for all the bad commands of a comment: the option, what is allowed, an example. */
export function renderCommandErrors(errors: readonly CommandError[]): string {
  const items = errors.map((e) =>
    [
      `- line ${e.line}, \`${inlineCode(e.text)}\`: \`${inlineCode(e.value === undefined ? e.option : `${e.option}=${e.value}`)}\` ${e.problem}.`,
      `  Allowed: ${e.allowed}. Example: \`${inlineCode(e.example)}\``,
    ].join("\n"),
  );
  const heading =
    errors.length === 1 ? "This command was not run:" : `These ${errors.length} commands were not run:`;
  return [heading, "", ...items, "", "`/test ?` lists every command."].join("\n");
}

/** Text shown inside single backticks: a backtick inside would end the span early. */
function inlineCode(text: string): string {
  return text.replace(/`/g, "'").slice(0, 300);
}
