// Progress of a long stage on the terminal (stderr), as `train`, `eval` and `pretrain` show it: a bar redrawn
// in place on a terminal, one line per tenth elsewhere (CI, a pipe), with the time left at the pace so far.

export function progressBar(fraction: number, width = 24): string {
  const full = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}]`;
}

export const clock = (seconds: number) => {
  const s = Math.max(0, Math.round(seconds));
  return s >= 3600
    ? `${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`
    : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

/** "[#####...] evaluating 37/100 episodes  0:21 elapsed, ETA 0:36" (ETA from the pace of the part done). */
export function stageProgressText(doing: string, done: number, total: number, unit: string, elapsedSeconds: number): string {
  const eta = done >= total ? 'done' : done === 0 ? 'ETA —' : `ETA ${clock((elapsedSeconds / done) * (total - done))}`;
  return `${progressBar(done / total)} ${doing} ${done}/${total} ${unit}  ${clock(elapsedSeconds)} elapsed, ${eta}`;
}

/** One stage's progress line on stderr (or any writer): redrawn on a terminal, else a line per tenth. */
export class StageProgress {
  private readonly start = Date.now();
  private loggedTenth = -1;

  constructor(
    private readonly doing: string,
    private readonly unit: string,
    private readonly tty = Boolean(process.stderr.isTTY),
    private readonly write: (text: string) => void = (t) => process.stderr.write(t),
  ) {}

  /** `done` of `total`, with what the stage has to say so far (a loss, a success count). */
  update(done: number, total: number, detail = ''): void {
    const text = stageProgressText(this.doing, done, total, this.unit, (Date.now() - this.start) / 1000) + (detail ? `  ${detail}` : '');
    if (this.tty) {
      this.write(`\r${text}\x1b[K${done >= total ? '\n' : ''}`);
      return;
    }
    const tenth = Math.floor((done / total) * 10);
    if (tenth === this.loggedTenth) return;
    this.loggedTenth = tenth;
    this.write(text + '\n');
  }
}
