// Renders in a small pool of worker threads so no message can block the
// server's event loop. Each render has a deadline; a worker that overruns is
// terminated and replaced. Idle workers do not keep the process alive.
// Renders are queued per key (the author): keys take turns, and one key has at
// most size - 1 renders running, so one user's renders never occupy every
// worker and another user waits for at most one render.

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
  key: string;
  content: string;
  context: RenderContext;
  resolve(result: RenderResult): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job: (Job & { id: number; timer: NodeJS.Timeout | null }) | null;
}

/** A test's hold on renders (see RenderPool.hold). */
export interface RenderHold {
  /** Resolves when a matching render has taken a worker. */
  reached: Promise<void>;
  /** Lets every held render run, and renders that match later run at once. */
  release(): void;
}

interface Hold {
  matches(content: string): boolean;
  held: (() => void)[];
  reached(): void;
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
  /** Read as each render starts: a test may shorten it for one render, then lengthen it again. */
  timeoutMs: number;
  readonly maxInputLength: number;
  readonly maxOutputLength: number;
  private size: number;
  private maxHeapMb: number;
  private slots: Slot[] = [];
  /** Waiting renders by key, keys in order of arrival. */
  private waiting = new Map<string, Job[]>();
  private running = new Map<string, number>();
  /** When each busy key last had a turn: the key whose turn is longest ago goes next. */
  private lastTurn = new Map<string, number>();
  private turns = 0;
  private holds: Hold[] = [];
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
  get queued(): number {
    return this.waitingCount();
  }

  /** `key`: whose render (the author); renders of one key wait behind each other. */
  render(content: string, context: RenderContext, key = ''): Promise<RenderResult> {
    if (this.closed) return Promise.reject(new MarkdownRenderError('closed', 'The Markdown renderer is closed'));
    if (content.length > this.maxInputLength) {
      return Promise.reject(new MarkdownRenderError('too_large', `Message is too long to render (over ${this.maxInputLength} characters)`));
    }
    const started = performance.now();
    const done = (ok: boolean) => this.onRendered?.((performance.now() - started) / 1000, ok);
    return new Promise((resolve, reject) => {
      const settle = {
        resolve: (r: RenderResult) => {
          done(true);
          resolve(r);
        },
        reject: (e: Error) => {
          done(false);
          reject(e);
        },
      };
      const job = { key, content, context, ...settle };
      const jobs = this.waiting.get(key);
      if (jobs) jobs.push(job);
      else this.waiting.set(key, [job]);
      while (this.slots.length < this.size && this.slots.length < this.waitingCount() + this.busyCount()) this.spawn();
      this.dispatch();
    });
  }

  /**
   * For tests: renders whose content matches take a worker but do not start
   * until released, standing in for a slow render.
   */
  hold(matches: (content: string) => boolean): RenderHold {
    let reached!: () => void;
    const promise = new Promise<void>((r) => (reached = r));
    const hold: Hold = { matches, held: [], reached };
    this.holds.push(hold);
    return {
      reached: promise,
      release: () => {
        this.holds = this.holds.filter((h) => h !== hold);
        for (const start of hold.held.splice(0)) start();
      },
    };
  }

  /** Stops all workers; pending renders fail with reason "closed". */
  async close(): Promise<void> {
    this.closed = true;
    const waiting = [...this.waiting.values()].flat();
    this.waiting.clear();
    for (const job of waiting) job.reject(new MarkdownRenderError('closed', 'The Markdown renderer is closed'));
    const slots = this.slots.splice(0);
    for (const slot of slots) {
      if (slot.job) {
        if (slot.job.timer) clearTimeout(slot.job.timer);
        slot.job.reject(new MarkdownRenderError('closed', 'The Markdown renderer is closed'));
        slot.job = null;
      }
    }
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private busyCount(): number {
    return this.slots.filter((s) => s.job).length;
  }

  private waitingCount(): number {
    let n = 0;
    for (const jobs of this.waiting.values()) n += jobs.length;
    return n;
  }

  /** The first render of the key whose turn is longest ago, none beyond its share of workers. */
  private nextJob(): Job | undefined {
    const share = Math.max(1, this.size - 1);
    let best: string | undefined;
    for (const key of this.waiting.keys()) {
      if ((this.running.get(key) ?? 0) >= share) continue;
      if (best === undefined || (this.lastTurn.get(key) ?? -1) < (this.lastTurn.get(best) ?? -1)) best = key;
    }
    if (best === undefined) return undefined;
    const jobs = this.waiting.get(best)!;
    const job = jobs.shift()!;
    if (!jobs.length) this.waiting.delete(best);
    this.running.set(best, (this.running.get(best) ?? 0) + 1);
    this.lastTurn.set(best, ++this.turns);
    return job;
  }

  /** Ends a slot's job (whatever the outcome): its key may run another. */
  private finish(slot: Slot): Slot['job'] {
    const job = slot.job;
    if (!job) return null;
    if (job.timer) clearTimeout(job.timer);
    slot.job = null;
    const n = (this.running.get(job.key) ?? 1) - 1;
    if (n > 0) this.running.set(job.key, n);
    else {
      this.running.delete(job.key);
      if (!this.waiting.has(job.key)) this.lastTurn.delete(job.key);
    }
    return job;
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
      if (!slot.job || slot.job.id !== msg.id) return;
      const job = this.finish(slot)!;
      if (msg.error !== undefined) {
        const reason = msg.reason ?? 'failed';
        job.reject(new MarkdownRenderError(reason, reason === 'failed' ? `Markdown rendering failed: ${msg.error}` : msg.error));
      } else if (msg.result!.html.length > this.maxOutputLength) job.reject(new MarkdownRenderError('too_large', 'Rendered message is too large'));
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
    this.finish(slot)?.reject(error);
    void slot.worker.terminate();
    if (!this.closed && this.waitingCount()) this.spawn();
    this.dispatch();
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      const job = slot.ready && !slot.job ? this.nextJob() : undefined;
      if (job) {
        const running: NonNullable<Slot['job']> = { ...job, id: this.nextId++, timer: null };
        slot.job = running;
        const start = () => {
          if (slot.job !== running) return;
          running.timer = setTimeout(() => {
            this.replace(slot, new MarkdownRenderError('timeout', `Rendering took longer than ${this.timeoutMs} ms and was stopped`));
          }, this.timeoutMs);
          slot.worker.postMessage({ id: running.id, content: job.content, context: job.context });
        };
        const hold = this.holds.find((h) => h.matches(job.content));
        if (hold) {
          hold.held.push(start);
          hold.reached();
        } else start();
      }
      this.updateRef(slot);
    }
  }

  // Keep the process alive only while there is work.
  private updateRef(slot: Slot): void {
    if (slot.job || this.waiting.size) slot.worker.ref();
    else slot.worker.unref();
  }
}
