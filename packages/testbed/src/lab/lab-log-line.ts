/** A lab program's log line: one JSON object (time, msg, fields) per line on stdout, as the pod log shows it. */
export function labLogLine(message: string, fields: Record<string, unknown> = {}): string {
  return `${JSON.stringify({ time: new Date().toISOString(), msg: message, ...fields })}\n`;
}
