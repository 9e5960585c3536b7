/** A private working directory and, when the caller is root, an unprivileged user for binaries. */
export interface BinarySandbox {
  cwd: string;
  uid?: number;
  gid?: number;
}
