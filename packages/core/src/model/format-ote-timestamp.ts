/** Formats a time the way openshift-tests-extension does: `2025-01-31 12:00:01.123456 UTC`. */
export function formatOteTimestamp(date: Date): string {
  const iso = date.toISOString(); // 2025-01-31T12:00:01.123Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}000 UTC`;
}
