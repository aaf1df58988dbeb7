// A pass run at once and then every interval, one at a time (the scheduler's
// and the job worker's loop): stop() ends the timer and waits for a pass under way.

import type { Logger } from 'pino';

export interface Periodic {
  stop(): Promise<void>;
}

export function startPeriodic(log: Logger, label: string, pass: () => Promise<unknown>, intervalMs: number): Periodic {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const tick = () => {
    running = pass()
      .then(
        () => {},
        (err) => log.error({ err }, `${label} failed`),
      )
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, intervalMs).unref();
      });
  };
  tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
