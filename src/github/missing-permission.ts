import { NetstressError } from "@netstress/core/errors/netstress-error.ts";

/**
 * GitHub refused a write because the installation did not grant a permission (or an organization
 * restricts the app); writes of the installation are paused rather than retried.
 */
export class MissingPermission extends NetstressError<"missing-permission"> {
  override readonly name = "MissingPermission";
  /** What GitHub's `x-accepted-github-permissions` asks for, e.g. `checks=write` ("" when it did not say). */
  readonly permission: string;
  constructor(permission: string) {
    super(
      `GitHub refused the write: the installation lacks ${permission ? `the permission ${permission}` : "a permission"}`,
      { code: "missing-permission" },
    );
    this.permission = permission;
  }
}
