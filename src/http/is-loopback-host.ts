/** Whether a host name (as a URL's `hostname` gives it) is this machine: localhost, 127/8 or ::1. */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || /^127\.\d+\.\d+\.\d+$/.test(host) || host === "[::1]";
}
