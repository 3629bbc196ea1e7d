// The dashboard's episode player (inside the webview): the frames the CLI re-simulated (`rewardsmith playback
// --format json`, one palette PNG of stacked frames) under a scrubber, a timeline of reward, distance to the
// nearest target and health with a cursor, and the analyzer's notes that jump to their steps. Text from the
// run's files reaches the page only as textContent.
import type { PlaybackRecord } from '../../../runner/src/records';

const COLOURS = { reward: '#4e9ee8', dense: '#59b56a', sparse: '#e5c07b', target: '#c678dd', health: '#e06c75' };

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, className?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (className) e.className = className;
  return e;
}

const signed = (v: number | null, digits: number) => (v === null ? '—' : `${v > 0 ? '+' : ''}${v.toFixed(digits)}`);

let timer: ReturnType<typeof setInterval> | undefined;

/** Shows a line in the player's place (loading, or why there is no playback). */
export function showPlaybackText(box: HTMLElement, text: string): void {
  if (timer !== undefined) clearInterval(timer);
  timer = undefined;
  box.replaceChildren(el('p', text, 'muted'));
}

/** Replaces the player's contents with this episode's playback, shown at `startStep` (a finding's evidence) or the start. */
export function showPlayback(box: HTMLElement, run: string, r: PlaybackRecord, startStep = 0): void {
  if (timer !== undefined) clearInterval(timer);
  timer = undefined;
  const which = r.probe
    ? `probe episode ${r.probe.number} of ${r.probe.of} (${r.probe.description}) · world ${r.seed}`
    : `episode ${r.episode} · seed ${r.seed}`;
  const title = el('p', `${run}: ${which} · ${r.outcome} · ${r.steps} steps${r.every > 1 ? ` · one frame every ${r.every} steps` : ''}`);
  const frame = el('canvas', undefined, 'frame');
  frame.width = r.width;
  frame.height = r.height;
  const ctx = frame.getContext('2d')!;
  const sprite = new Image();
  const play = el('button', '▶ play');
  const slider = el('input');
  slider.type = 'range';
  slider.min = '0';
  slider.max = String(r.rows.length - 1);
  slider.value = '0';
  const controls = el('div', undefined, 'pb-controls');
  controls.append(play, slider);
  const readout = el('div', '', 'muted');
  const timeline = el('canvas', undefined, 'timeline');
  const notes = el('ul');
  const noteItems = r.notes.map((n) => {
    const [from, to] = n.steps ?? [1, r.steps];
    const jump = el('button', n.steps ? `steps ${from}–${to}` : 'episode');
    const item = el('li', undefined, 'pb-note');
    item.append(jump, el('span', ` ${n.suggestion}: ${n.note}`));
    jump.addEventListener('click', () => {
      stop();
      show(frameAt(r, from));
    });
    notes.append(item);
    return { item, from, to };
  });
  box.replaceChildren(
    title,
    frame,
    controls,
    readout,
    timeline,
    // A probe episode is the probes' evidence, not the analyzer's: it has no notes to miss.
    ...(r.notes.length ? [notes] : r.probe ? [] : [el('p', 'The analyzer cites no steps of this episode.', 'muted')]),
    ...r.remarks.map((t) => el('p', t, 'muted')),
  );

  const show = (k: number) => {
    k = Math.max(0, Math.min(r.rows.length - 1, k));
    slider.value = String(k);
    if (sprite.complete) ctx.drawImage(sprite, 0, k * r.height, r.width, r.height, 0, 0, r.width, r.height);
    const row = r.rows[k]!;
    const from = k > 0 ? r.rows[k - 1]!.step : 0;
    const terms = row.dense === null ? '' : ` (dense ${signed(row.dense, 3)}, sparse ${signed(row.sparse, 3)})`;
    readout.textContent = `step ${row.step} of ${r.steps} · ${row.action ?? 'start'} · reward ${signed(row.reward, 3)}${terms} · target ${row.target === null ? 'not in view' : `${row.target.toFixed(1)} m`} · health ${row.health}`;
    for (const n of noteItems) n.item.classList.toggle('active', k > 0 && from < n.to && row.step >= n.from);
    drawTimeline(timeline, r, k);
  };
  const stop = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
    play.textContent = '▶ play';
  };
  play.addEventListener('click', () => {
    if (timer !== undefined) return stop();
    if (Number(slider.value) >= r.rows.length - 1) show(0);
    play.textContent = '❚❚ pause';
    timer = setInterval(() => {
      const k = Number(slider.value) + 1;
      if (k >= r.rows.length) stop();
      else show(k);
    }, 80);
  });
  slider.addEventListener('input', () => {
    stop();
    show(Number(slider.value));
  });
  sprite.addEventListener('load', () => show(Number(slider.value)));
  sprite.src = `data:image/png;base64,${r.frames_png}`;
  show(frameAt(r, startStep));
}

/** The first frame showing `step` or a later one (frames are every `every` steps); the last frame past the end. */
export function frameAt(r: Pick<PlaybackRecord, 'rows'>, step: number): number {
  const k = r.rows.findIndex((row) => row.step >= step);
  return k < 0 ? r.rows.length - 1 : k;
}

/** Three strips (reward with its terms, target distance, health) over the frames, notes shaded, a cursor at frame k. */
function drawTimeline(canvas: HTMLCanvasElement, r: PlaybackRecord, k: number): void {
  const width = (canvas.width = canvas.clientWidth || 480);
  const height = (canvas.height = 120);
  const ctx = canvas.getContext('2d')!;
  ctx.clearRect(0, 0, width, height);
  const left = 56,
    w = width - left - 4,
    strip = 32,
    gap = 6;
  const x = (i: number) => left + (r.rows.length > 1 ? (i * w) / (r.rows.length - 1) : 0);
  const fg = getComputedStyle(document.body).getPropertyValue('--vscode-foreground').trim() || '#ccc';
  ctx.font = '10px sans-serif';
  ctx.fillStyle = 'rgba(229, 192, 123, 0.2)';
  for (const n of r.notes) {
    const [a, b] = n.steps ?? [1, r.steps];
    const i0 = Math.max(0, Math.ceil(a / r.every) - 1),
      i1 = Math.min(r.rows.length - 1, Math.ceil(b / r.every));
    ctx.fillRect(x(i0), 0, Math.max(2, x(i1) - x(i0)), 3 * (strip + gap));
  }
  const strips: { label: string; lines: { values: (number | null)[]; colour: string }[]; lo?: number; hi?: number }[] = [
    {
      label: 'reward',
      lines: [
        { values: r.rows.map((row) => row.reward), colour: COLOURS.reward },
        { values: r.rows.map((row) => row.dense), colour: COLOURS.dense },
        { values: r.rows.map((row) => row.sparse), colour: COLOURS.sparse },
      ],
    },
    { label: 'target m', lo: 0, lines: [{ values: r.rows.map((row) => row.target), colour: COLOURS.target }] },
    { label: 'health', lo: 0, hi: 10, lines: [{ values: r.rows.map((row) => row.health), colour: COLOURS.health }] },
  ];
  strips.forEach((s, j) => {
    const top = j * (strip + gap);
    const all = s.lines.flatMap((l) => l.values).filter((v): v is number => v !== null);
    const lo = s.lo ?? Math.min(0, ...all);
    let hi = s.hi ?? Math.max(0, ...all);
    if (hi - lo < 1e-9) hi = lo + 1;
    const y = (v: number) => top + strip - ((v - lo) / (hi - lo)) * strip;
    ctx.fillStyle = fg;
    ctx.fillText(s.label, 2, top + 12);
    ctx.strokeStyle = 'rgba(128,128,128,0.4)';
    ctx.strokeRect(left, top, w, strip);
    for (const line of s.lines) {
      ctx.strokeStyle = line.colour;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      let pen = false;
      line.values.forEach((v, i) => {
        if (v === null) pen = false;
        else if (!pen) {
          ctx.moveTo(x(i), y(v));
          pen = true;
        } else ctx.lineTo(x(i), y(v));
      });
      ctx.stroke();
    }
  });
  ctx.strokeStyle = fg;
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(x(k), 0);
  ctx.lineTo(x(k), 3 * (strip + gap));
  ctx.stroke();
}
