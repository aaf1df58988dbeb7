// Worker-thread entry: renders one message at a time for the pool.
// Runs user-influenced regexes (linkifiers, the flavor's patterns) off the
// main thread, so the pool can terminate it when a render overruns.

import { parentPort } from 'node:worker_threads';
import { preloadEmoji } from './emoji.ts';
import { MarkdownRenderError } from './errors.ts';
import { renderSync } from './render.ts';
import type { RenderContext } from './types.ts';

interface Job {
  id: number;
  content: string;
  context: RenderContext;
}

preloadEmoji();
// Warm up the lazily built pieces (link regex, highlighter, KaTeX) before the first job.
renderSync('warm up http://example.com :smile: $$x$$\n```python\nx = 1\n```', {});

parentPort!.on('message', (job: Job) => {
  try {
    parentPort!.postMessage({ id: job.id, result: renderSync(job.content, job.context) });
  } catch (err) {
    const reason = err instanceof MarkdownRenderError ? err.reason : 'failed';
    parentPort!.postMessage({ id: job.id, error: err instanceof Error ? err.message : String(err), reason });
  }
});
parentPort!.postMessage({ ready: true });
