// Renders in a small pool of worker threads so no message can block the
// server's event loop. Each render has a deadline; a worker that overruns is
// terminated and replaced. Idle workers do not keep the process alive.

import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { MarkdownRenderError, type MarkdownRenderErrorReason } from './errors.ts';
import type { RenderContext, RenderResult } from './types.ts';

export interface RenderPoolOptions {
  /** Worker threads. Default: cores - 1, between 1 and 4. */
  size?: number;
  /** Deadline for one render, in milliseconds. Default 5000 (the reference server's limit). */
  timeoutMs?: number;
  /** Longest accepted input, in UTF-16 units. Default 100 000. */
  maxInputLength?: number;
  /** Longest accepted output. Default 1 000 000 (the reference server's 100 x max message length). */
  maxOutputLength?: number;
  /** Heap limit of each worker, in MB. Default 256. */
  maxHeapMb?: number;
  /** Told how long each render took, waiting included (metrics). */
  onRendered?: (seconds: number, ok: boolean) => void;
}

interface Job {
  content: string;
  context: RenderContext;
  resolve(result: RenderResult): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job: (Job & { id: number; timer: NodeJS.Timeout }) | null;
}

const WORKER_URL = new URL('./worker.ts', import.meta.url);

/**
 * Workers inherit the parent's flags, including an inline script (-e/-p) that
 * they would run again; drop it. Otherwise keep Node's default inheritance.
 */
function workerExecArgv(): string[] | undefined {
  const args = process.execArgv;
  if (!args.some((a) => a === '-e' || a === '-p' || a.startsWith('--eval') || a.startsWith('--print'))) return undefined;
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-e' || a === '--eval' || a === '-p' || a === '--print') i++;
    else if (!a.startsWith('--eval=') && !a.startsWith('--print=') && !a.startsWith('--input-type')) out.push(a);
  }
  return out;
}

export class RenderPool {
  readonly timeoutMs: number;
  readonly maxInputLength: number;
  readonly maxOutputLength: number;
  private size: number;
  private maxHeapMb: number;
  private slots: Slot[] = [];
  private queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  private onRendered: RenderPoolOptions['onRendered'];

  constructor(options: RenderPoolOptions = {}) {
    this.size = options.size ?? Math.min(4, Math.max(1, availableParallelism() - 1));
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.maxInputLength = options.maxInputLength ?? 100_000;
    this.maxOutputLength = options.maxOutputLength ?? 1_000_000;
    this.maxHeapMb = options.maxHeapMb ?? 256;
    this.onRendered = options.onRendered;
  }

  /** Renders waiting for a worker. */
  get waiting(): number {
    return this.queue.length;
  }

  render(content: string, context: RenderContext): Promise<RenderResult> {
    if (this.closed) return Promise.reject(new MarkdownRenderError('closed', 'The Markdown renderer is closed'));
    if (content.length > this.maxInputLength) {
      return Promise.reject(
        new MarkdownRenderError('too_large', `Message is too long to render (over ${this.maxInputLength} characters)`),
      );
    }
    const started = performance.now();
    const done = (ok: boolean) => this.onRendered?.((performance.now() - started) / 1000, ok);
    return new Promise((resolve, reject) => {
      const settle = { resolve: (r: RenderResult) => (done(true), resolve(r)), reject: (e: Error) => (done(false), reject(e)) };
      this.queue.push({ content, context, ...settle });
      while (this.slots.length < this.size && this.slots.length < this.queue.length + this.busyCount()) this.spawn();
      this.dispatch();
    });
  }

  /** Stops all workers; pending renders fail with reason "closed". */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new MarkdownRenderError('closed', 'The Markdown renderer is closed'));
    const slots = this.slots.splice(0);
    for (const slot of slots) {
      if (slot.job) {
        clearTimeout(slot.job.timer);
        slot.job.reject(new MarkdownRenderError('closed', 'The Markdown renderer is closed'));
        slot.job = null;
      }
    }
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private busyCount(): number {
    return this.slots.filter((s) => s.job).length;
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_URL, {
      execArgv: workerExecArgv(),
      resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb },
    });
    const slot: Slot = { worker, ready: false, job: null };
    worker.on('message', (msg: { ready?: boolean; id?: number; result?: RenderResult; error?: string; reason?: MarkdownRenderErrorReason }) => {
      if (msg.ready) {
        slot.ready = true;
        this.dispatch();
        return;
      }
      const job = slot.job;
      if (!job || job.id !== msg.id) return;
      clearTimeout(job.timer);
      slot.job = null;
      if (msg.error !== undefined) {
        const reason = msg.reason ?? 'failed';
        job.reject(new MarkdownRenderError(reason, reason === 'failed' ? `Markdown rendering failed: ${msg.error}` : msg.error));
      }
      else if (msg.result!.html.length > this.maxOutputLength)
        job.reject(new MarkdownRenderError('too_large', 'Rendered message is too large'));
      else job.resolve(msg.result!);
      this.dispatch();
    });
    const onDeath = (err?: Error) => {
      if (!this.slots.includes(slot)) return;
      this.replace(slot, new MarkdownRenderError('failed', `Markdown renderer crashed${err ? `: ${err.message}` : ''}`));
    };
    worker.on('error', onDeath);
    worker.on('exit', () => onDeath());
    this.slots.push(slot);
    this.updateRef(slot);
    return slot;
  }

  /** Drops a slot (failing its job) and starts a fresh worker if work remains. */
  private replace(slot: Slot, error: MarkdownRenderError): void {
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    if (slot.job) {
      clearTimeout(slot.job.timer);
      slot.job.reject(error);
      slot.job = null;
    }
    void slot.worker.terminate();
    if (!this.closed && this.queue.length) this.spawn();
    this.dispatch();
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.ready && !slot.job && this.queue.length) {
        const job = this.queue.shift()!;
        const id = this.nextId++;
        const timer = setTimeout(() => {
          this.replace(
            slot,
            new MarkdownRenderError('timeout', `Rendering took longer than ${this.timeoutMs} ms and was stopped`),
          );
        }, this.timeoutMs);
        slot.job = { ...job, id, timer };
        slot.worker.postMessage({ id, content: job.content, context: job.context });
      }
      this.updateRef(slot);
    }
  }

  // Keep the process alive only while there is work.
  private updateRef(slot: Slot): void {
    if (slot.job || this.queue.length) slot.worker.ref();
    else slot.worker.unref();
  }
}
