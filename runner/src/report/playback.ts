// The report's episode playback: for a few recorded episodes (failures first, then successes), the frames of
// what the agent saw (re-simulated, playback/replay.ts) under a scrubber (play/pause, step slider, keys),
// beside a timeline of reward (its dense and sparse terms), distance to the nearest target and health, with
// the analyzer's notes on the steps they cite, and a "Download GIF" encoded in the page by gifenc (inlined).
// Everything the page shows of a run's files is escaped (escape.ts escapeHtml, the one markup escape); data
// travels as JSON inside a script element. The scripts run under the page's CSP, allowed by their hashes.
import { readFileSync } from 'node:fs';
import type { EpisodeRecord, RunSummary, SuggestionRecord } from '../records';
import { GAME_FACTS } from '../schema';
import { framesPng, gifencPath } from '../playback/encode';
import { PlaybackError, playbackEpisodes, replayEpisode, replayEpisodes, type Playback } from '../playback/replay';
import { playbackTask } from '../playback/command';
import { escapeHtml } from '../escape';

/**
 * Episodes played back per run and frames per episode: the page stays a few hundred kB. The playback is most of
 * what the report costs every `train` and `eval`, and its frames most of the playback (a 96 × 80 picture costs
 * 2–5 ms of CPU): 150 frames of a 2,000-step episode (one every 14 steps) rather than 300 (README, Speed).
 */
export const REPORT_PLAYBACK = { failures: 4, successes: 2, maxFrames: 150 } as const;

const esc = escapeHtml;
/** JSON inside a <script> element: no `<` can end it. */
const scriptJson = (v: unknown) => JSON.stringify(v).replace(/</g, '\\u003c');

const STRIP = { left: 70, width: 420, height: 36, gap: 8 } as const;

/**
 * The playbacks the run's section shows (its chosen episodes re-simulated, on two threads: `replayEpisodes`), for
 * `playbackSection`: undefined when none is chosen, the PlaybackError when they cannot be made (the section says why).
 */
export async function reportPlaybacks(
  summary: RunSummary | null,
  episodes: readonly EpisodeRecord[],
  suggestions: readonly SuggestionRecord[],
): Promise<Playback[] | PlaybackError | undefined> {
  const chosen = playbackEpisodes(episodes, REPORT_PLAYBACK.failures, REPORT_PLAYBACK.successes);
  if (chosen.length === 0) return undefined;
  try {
    return await replayEpisodes(playbackTask(summary), chosen, { maxFrames: REPORT_PLAYBACK.maxFrames, suggestions });
  } catch (err) {
    if (err instanceof PlaybackError) return err;
    throw err;
  }
}

/** The run's playback section: the players, or why there are none. */
export function playbackSection(
  summary: RunSummary | null,
  episodes: readonly EpisodeRecord[],
  suggestions: readonly SuggestionRecord[],
  /** Prefix of the players' element ids, unique per run on the page. */
  idPrefix = 'playback',
  /** What `reportPlaybacks` made of the chosen episodes (their playbacks, or why there are none); else they are re-simulated here. */
  made?: readonly Playback[] | PlaybackError,
): string {
  if (episodes.length === 0) return '<p class=muted>No evaluation episodes to play back.</p>';
  const chosen = playbackEpisodes(episodes, REPORT_PLAYBACK.failures, REPORT_PLAYBACK.successes);
  if (chosen.length === 0)
    return '<p class=muted>No episode can be played back: these records predate playback (they carry no actions). Evaluating the run again records them.</p>';
  let players: string[];
  try {
    if (made instanceof PlaybackError) throw made; // the replays failed already: not re-simulated to fail again
    const task = playbackTask(summary);
    players = chosen.map((ep, k) => player(made?.[k] ?? replayEpisode(task, ep, { maxFrames: REPORT_PLAYBACK.maxFrames, suggestions }), idPrefix));
  } catch (err) {
    if (err instanceof PlaybackError) return `<p class=muted>No playback: ${esc(err.message)}.</p>`;
    throw err;
  }
  const failed = episodes.filter((e) => !e.success).length;
  return `<p>What the agent saw, re-simulated from each episode's seed and actions (${chosen.length} of ${episodes.length} episodes: up to ${REPORT_PLAYBACK.failures} of the ${failed} failed ones, then up to ${REPORT_PLAYBACK.successes} successes; at most ${REPORT_PLAYBACK.maxFrames} frames each). The picture covers the observation's field of view (${GAME_FACTS.fovYawDeg * 2}° × ${GAME_FACTS.fovPitchDeg * 2}°, ${GAME_FACTS.viewDistance} m) in the game's map colours; ores in their mineral's colour.</p>
${players.join('\n')}`;
}

function player(p: Playback, idPrefix: string): string {
  const data = { episode: p.episode, width: p.width, height: p.height, every: p.every, palette: p.palette, rows: p.rows, x0: STRIP.left, dx: stepWidth(p) };
  const last = p.rows.length - 1;
  const notes = p.notes.length
    ? `<ul class=pb-notes>${p.notes
        .map(
          (n) =>
            `<li class=pb-note data-from="${esc(n.steps?.[0] ?? 1)}" data-to="${esc(n.steps?.[1] ?? p.steps)}"><button type=button class=pb-jump>${n.steps ? `steps ${esc(n.steps[0])}–${esc(n.steps[1])}` : 'episode'}</button> <b>${esc(n.suggestion)}</b>: ${esc(n.note)}</li>`,
        )
        .join('')}</ul>`
    : '<p class="muted pb-nonotes">The analyzer cites no steps of this episode.</p>';
  return `<figure class=pb id="${esc(idPrefix)}-${esc(p.episode)}" data-episode="${esc(p.episode)}">
<figcaption>episode ${esc(p.episode)} · seed ${esc(p.seed)} · ${esc(p.outcome)} · ${esc(p.steps)} steps${p.every > 1 ? ` · one frame every ${p.every} steps` : ''}</figcaption>
<div class=pb-body><div class=pb-view><canvas width=${p.width} height=${p.height} aria-label="what the agent saw in episode ${esc(p.episode)}"></canvas>
<img class=pb-sprite hidden alt="" src="data:image/png;base64,${framesPng(p).toString('base64')}">
<div class=pb-controls><button type=button class=pb-play>▶ play</button><input type=range class=pb-slider min=0 max=${last} value=0 step=1 aria-label="frame"><button type=button class=pb-gif>Download GIF</button></div>
<output class=pb-readout></output></div>
<div class=pb-side>${timelineSvg(p)}${notes}</div></div>
${p.remarks.map((r) => `<p class=note>${esc(r)}</p>`).join('')}
<script type="application/json" class=pb-data>${scriptJson(data)}</script></figure>`;
}

const stepWidth = (p: Playback) => (p.rows.length > 1 ? STRIP.width / (p.rows.length - 1) : 0);

/** Three strips over the frames: reward (dense, sparse), distance to the nearest target, health; notes shaded; a cursor the script moves. */
function timelineSvg(p: Playback): string {
  const dx = stepWidth(p);
  const xOf = (i: number) => STRIP.left + i * dx;
  const strips: { label: string; series: { values: (number | null)[]; cls: string; name: string }[]; lo?: number; hi?: number; unit: string }[] = [
    {
      label: 'reward',
      unit: '',
      series: [
        { values: p.rows.map((r) => r.reward), cls: 'pb-reward', name: 'total' },
        ...(p.rows.some((r) => r.dense !== null)
          ? [
              { values: p.rows.map((r) => r.dense), cls: 'pb-dense', name: 'dense' },
              { values: p.rows.map((r) => r.sparse), cls: 'pb-sparse', name: 'sparse' },
            ]
          : []),
      ],
    },
    { label: 'target', unit: ' m', lo: 0, series: [{ values: p.rows.map((r) => r.target), cls: 'pb-target', name: 'distance to the nearest target in view' }] },
    { label: 'health', unit: '', lo: 0, hi: GAME_FACTS.maxHealth, series: [{ values: p.rows.map((r) => r.health), cls: 'pb-health', name: 'health' }] },
  ];
  const height = strips.length * (STRIP.height + STRIP.gap) + 14;
  const parts: string[] = [];
  const shades: string[] = [];
  for (const n of p.notes) {
    const [a, b] = n.steps ?? [1, p.steps];
    const i0 = Math.max(0, Math.ceil(a / p.every) - 1),
      i1 = Math.min(p.rows.length - 1, Math.ceil(b / p.every));
    shades.push(
      `<rect class=pb-shade x="${xOf(i0).toFixed(1)}" y=0 width="${Math.max(2, xOf(i1) - xOf(i0)).toFixed(1)}" height="${height - 14}"><title>${esc(n.suggestion)}: ${esc(n.note)}</title></rect>`,
    );
  }
  strips.forEach((_, k) =>
    parts.push(`<rect class=pb-strip x=${STRIP.left} y=${k * (STRIP.height + STRIP.gap)} width=${STRIP.width} height=${STRIP.height} />`),
  );
  // Notes over the strips' backgrounds, under their lines.
  parts.push(...shades);
  strips.forEach((s, k) => {
    const top = k * (STRIP.height + STRIP.gap);
    const all = s.series.flatMap((x) => x.values).filter((v): v is number => v !== null);
    let lo = s.lo ?? Math.min(0, ...all),
      hi = s.hi ?? Math.max(0, ...all);
    if (hi - lo < 1e-9) hi = lo + 1;
    const yOf = (v: number) => top + STRIP.height - ((v - lo) / (hi - lo)) * STRIP.height;
    parts.push(`<text x=${STRIP.left - 6} y=${top + 12} text-anchor=end class=pb-label>${s.label}</text>`);
    parts.push(`<text x=${STRIP.left - 6} y=${top + 24} text-anchor=end class=pb-range>${fmtAxis(hi)}${s.unit}</text>`);
    parts.push(`<text x=${STRIP.left - 6} y=${top + STRIP.height} text-anchor=end class=pb-range>${fmtAxis(lo)}${s.unit}</text>`);
    if (lo < 0 && hi > 0) parts.push(`<line class=pb-zero x1=${STRIP.left} x2=${STRIP.left + STRIP.width} y1=${yOf(0).toFixed(1)} y2=${yOf(0).toFixed(1)} />`);
    for (const series of s.series) {
      // Gaps (no target in view, no reward recorded) break the line.
      const runs: string[][] = [[]];
      series.values.forEach((v, i) => {
        if (v === null) runs.push([]);
        else runs[runs.length - 1]!.push(`${xOf(i).toFixed(1)},${yOf(v).toFixed(1)}`);
      });
      for (const pts of runs)
        if (pts.length > 0)
          parts.push(
            `<polyline class="${series.cls}" points="${pts.length === 1 ? `${pts[0]} ${pts[0]}` : pts.join(' ')}"><title>${esc(series.name)}</title></polyline>`,
          );
    }
  });
  parts.push(
    `<text x=${STRIP.left} y=${height - 2} class=pb-range>step 0</text><text x=${STRIP.left + STRIP.width} y=${height - 2} text-anchor=end class=pb-range>step ${esc(p.steps)}</text>`,
  );
  parts.push(`<line class=pb-cursor x1=${STRIP.left} x2=${STRIP.left} y1=0 y2=${height - 14} />`);
  const legend = p.rows.some((r) => r.dense !== null)
    ? '<span class=pb-key-reward>total</span> <span class=pb-key-dense>dense</span> <span class=pb-key-sparse>sparse</span>'
    : '<span class=pb-key-reward>reward</span>';
  return `<svg class=pb-timeline viewBox="0 0 ${STRIP.left + STRIP.width + 4} ${height}" width=${STRIP.left + STRIP.width + 4} height=${height} role=img aria-label="reward, target distance and health over episode ${esc(p.episode)}">${parts.join('')}</svg>
<p class=caption>${legend}${p.every > 1 ? ` (summed over each ${p.every} steps)` : ''} · distance to the nearest target in view (gaps: none in view) · health of ${GAME_FACTS.maxHealth}. Shaded: steps the analyzer cites.</p>`;
}

const fmtAxis = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(Math.abs(v) < 1 ? 2 : 1));

export const PLAYBACK_STYLE = `.pb{border:1px solid #e3e6ea;border-radius:4px;padding:8px 12px;margin:12px 0}.pb figcaption{font-weight:600;margin-bottom:6px}
.pb-body{display:flex;flex-wrap:wrap;gap:16px}.pb-side{flex:1;min-width:320px}.pb-view canvas{width:288px;height:240px;image-rendering:pixelated;border:1px solid #c9d3bf;display:block}
.pb-controls{display:flex;gap:6px;align-items:center;margin:6px 0}.pb-slider{flex:1;min-width:120px}.pb-readout{display:block;font-size:12px;max-width:300px;min-height:3em}
.pb-strip{fill:#f7f8fa;stroke:#e3e6ea}.pb-label{font-size:11px;fill:#1d232a}.pb-range{font-size:9px;fill:#66707a}.pb-zero{stroke:#c9ccd1;stroke-dasharray:2 2}
.pb-reward{fill:none;stroke:#2c6fbb;stroke-width:1.5}.pb-dense{fill:none;stroke:#2e9d4a;stroke-width:1;stroke-dasharray:3 2}.pb-sparse{fill:none;stroke:#d97706;stroke-width:1.5}
.pb-target{fill:none;stroke:#8250df;stroke-width:1.5}.pb-health{fill:none;stroke:#c0392b;stroke-width:1.5}.pb-cursor{stroke:#1d232a;stroke-width:1}.pb-shade{fill:#e0a80059}
.pb-key-reward{color:#2c6fbb}.pb-key-dense{color:#2e9d4a}.pb-key-sparse{color:#d97706}.pb-notes{margin:4px 0;padding-left:18px;font-size:12px;max-width:500px}.pb-note.active{background:#fff7e0}
.pb-jump{font-size:11px}`;

// Runs in the page: one player per .pb figure. Values from the runs' files reach the DOM only as textContent.
const PLAYBACK_SCRIPT = `(function(){
function signed(v, digits){ return v === null ? '—' : (v > 0 ? '+' : '') + v.toFixed(digits); }
document.querySelectorAll('figure.pb').forEach(function(root){
  var d = JSON.parse(root.querySelector('.pb-data').textContent);
  var img = root.querySelector('.pb-sprite'), canvas = root.querySelector('canvas'), ctx = canvas.getContext('2d');
  var slider = root.querySelector('.pb-slider'), play = root.querySelector('.pb-play'), readout = root.querySelector('.pb-readout');
  var cursor = root.querySelector('.pb-cursor'), notes = root.querySelectorAll('.pb-note'), timer = null;
  function show(k){
    k = Math.max(0, Math.min(d.rows.length - 1, k));
    slider.value = String(k);
    ctx.drawImage(img, 0, k * d.height, d.width, d.height, 0, 0, d.width, d.height);
    var r = d.rows[k], from = k > 0 ? d.rows[k - 1].step : 0;
    var terms = r.dense === null ? '' : ' (dense ' + signed(r.dense, 3) + ', sparse ' + signed(r.sparse, 3) + ')';
    readout.textContent = 'step ' + r.step + ' of ' + d.rows[d.rows.length - 1].step + (r.action ? ' · ' + r.action : ' · start') +
      ' · reward ' + signed(r.reward, 3) + terms + ' · target ' + (r.target === null ? 'not in view' : r.target.toFixed(1) + ' m') + ' · health ' + r.health;
    root.dataset.frame = String(k);
    var x = d.x0 + k * d.dx;
    cursor.setAttribute('x1', x); cursor.setAttribute('x2', x);
    notes.forEach(function(n){ n.classList.toggle('active', k > 0 && from < +n.dataset.to && r.step >= +n.dataset.from); });
  }
  function stop(){ if (timer !== null) { clearInterval(timer); timer = null; } play.textContent = '▶ play'; }
  play.addEventListener('click', function(){
    if (timer !== null) return stop();
    if (+slider.value >= d.rows.length - 1) show(0);
    play.textContent = '❚❚ pause';
    timer = setInterval(function(){ var k = +slider.value + 1; if (k >= d.rows.length) return stop(); show(k); }, 80);
  });
  slider.addEventListener('input', function(){ stop(); show(+slider.value); });
  root.querySelectorAll('.pb-jump').forEach(function(b){
    b.addEventListener('click', function(){
      var from = +b.parentNode.dataset.from, k = 0;
      while (k < d.rows.length - 1 && d.rows[k].step < from) k++;
      stop(); show(k);
    });
  });
  root.querySelector('.pb-gif').addEventListener('click', function(){
    var lookup = {}, size = d.width * d.height;
    d.palette.forEach(function(c, j){ lookup[(c[0] << 16) | (c[1] << 8) | c[2]] = j; });
    var all = document.createElement('canvas'); all.width = d.width; all.height = d.height * d.rows.length;
    var actx = all.getContext('2d'); actx.drawImage(img, 0, 0);
    var px = actx.getImageData(0, 0, all.width, all.height).data, gif = gifenc.GIFEncoder();
    for (var f = 0; f < d.rows.length; f++) {
      var index = new Uint8Array(size);
      for (var p = 0; p < size; p++) { var o = (f * size + p) * 4; index[p] = lookup[(px[o] << 16) | (px[o + 1] << 8) | px[o + 2]] || 0; }
      gif.writeFrame(index, d.width, d.height, f === 0 ? {palette: d.palette, delay: 80, repeat: 0} : {delay: 80});
    }
    gif.finish();
    var a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([gif.bytes()], {type: 'image/gif'}));
    a.download = 'episode-' + d.episode + '.gif';
    document.body.appendChild(a); a.click(); a.remove();
  });
  if (img.complete) show(0); else img.addEventListener('load', function(){ show(0); });
});
})();`;

/** The texts of the page's playback scripts (gifenc inlined, then the players); none when no run has a player. */
export function playbackScriptSources(html: string): string[] {
  if (!html.includes('<figure class=pb ')) return [];
  // gifenc's CommonJS build, given an `exports` of its own.
  const gifenc = readFileSync(gifencPath(), 'utf8')
    .replace(/\/\/# sourceMappingURL=.*$/m, '')
    .replace(/<\/script/gi, '<\\/script');
  return [`var gifenc = (function(){ var exports = {}; ${gifenc}\nreturn exports; })();`, PLAYBACK_SCRIPT];
}
