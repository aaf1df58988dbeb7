// A progress bar for long operator commands, drawn only on a terminal
// (stderr), so that logs and pipes get plain lines and nothing else.

import cliProgress from 'cli-progress';

export interface Progress {
  /** A new stage of `total` units (bytes, rows, files). */
  stage(name: string, total: number, unit?: string): void;
  advance(by: number): void;
  done(): void;
}

export function terminalProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return silentProgress();
  let bar: cliProgress.SingleBar | undefined;
  const finish = () => {
    bar?.stop();
    bar = undefined;
  };
  return {
    stage(name, total, unit = 'B') {
      finish();
      bar = new cliProgress.SingleBar(
        { stream, format: `${name.padEnd(20)} [{bar}] {percentage}% {value}/{total} ${unit}`, hideCursor: true },
        cliProgress.Presets.shades_classic,
      );
      bar.start(Math.max(total, 1), 0);
    },
    advance(by) {
      bar?.increment(by);
    },
    done: finish,
  };
}

export function silentProgress(): Progress {
  return { stage() {}, advance() {}, done() {} };
}
