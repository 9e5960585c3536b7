import { OK_TO_TEST_LABEL } from "./authorize-actor.ts";

/** The polite answer to someone who may not start runs (yet): who can, and how to get approved. */
export function untrustedReply(options: { login: string; owner: string; isAuthor: boolean }): string {
  const who =
    `members of the ${options.owner} organization, collaborators with write access to this ` +
    `repository, and the trusted apps the bot is configured with`;
  const next = options.isAuthor
    ? `A member can approve this pull request by commenting \`/ok-to-test\`; after that its ` +
      `network-stress runs start automatically, and you can use the commands on it yourself.`
    : `A member can approve this pull request with \`/ok-to-test\` (it adds the ` +
      `\`${OK_TO_TEST_LABEL}\` label); after that its author can start runs too.`;
  return `Thanks, @${options.login}! network-stress runs can be started by ${who}. ${next} Nothing was run.`;
}
