// The one error rendering raises. `reason` tells callers what to report:
// the message is too long, rendering took too long, or the renderer failed.

export type MarkdownRenderErrorReason = 'too_large' | 'timeout' | 'failed' | 'closed';

export class MarkdownRenderError extends Error {
  readonly reason: MarkdownRenderErrorReason;

  constructor(reason: MarkdownRenderErrorReason, message: string) {
    super(message);
    this.name = 'MarkdownRenderError';
    this.reason = reason;
  }
}
