/**
 * What a reply tells an installation that lacks a permission: which one (GitHub's
 * `x-accepted-github-permissions`: alternatives separated by ";", each a list of `name=level`)
 * and where its owner grants it.
 */
export function permissionAdvice(permission: string, owner: string): string {
  const alternatives = permission
    .split(";")
    .map((set) =>
      set
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean)
        .map((p) => `\`${p.replace("=", ": ")}\``)
        .join(" and "),
    )
    .filter(Boolean);
  const what =
    alternatives.length === 0
      ? "a permission GitHub did not name (compare the installation's permissions with app.yml)"
      : alternatives.join(" or ");
  return (
    `**network-stress cannot write here:** GitHub refused a write ("Resource not accessible by integration"): ` +
    `the app needs ${what}. An owner of ${owner} grants it under Settings → GitHub Apps → network-stress → ` +
    `Configure (accept the updated permissions), or lifts the organization's restriction on the app. ` +
    `Check runs are paused until then and resume by themselves.`
  );
}
