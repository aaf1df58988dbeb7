// What Notification Bot tells an author whose scheduled message could not be sent.

/** A time as the reference's global-time Markdown writes it: `<time:2025-01-31T09:30:00+00:00>`. */
function globalTime(at: Date): string {
  return `<time:${at.toISOString().replace(/\.\d{3}Z$/, '+00:00')}>`;
}

export function deliveryFailedNotice(scheduledAt: Date, error: string): string {
  return [
    `The message you scheduled for ${globalTime(scheduledAt)} was not sent because of the following error:`,
    `> ${error}`,
    '[View scheduled messages](#scheduled)',
  ].join('\n\n');
}
