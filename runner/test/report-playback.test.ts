// The report's episode playback, opened offline in headless Chromium: a run recorded as evaluation records it,
// analysed for real, plus a suggestion whose note is hostile markup (suggestions.json is a shared file, not
// trusted). The frames must render (canvas not blank), the scrubber must move the frame, play must advance,
// a note must jump to its steps, the timeline must match the recorded rewards, the GIF must download, no
// request may leave the file and the hostile note must stay text. A screenshot is kept
// (REWARDSMITH_TEST_ARTIFACTS, else a temp dir).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeReport } from '../src/report/report';
import { analyzeRun } from '../src/analyze/analyze';
import { episodeRewards, RUN_FILES, type SuggestionRecord } from '../src/records';
import { REPORT_PLAYBACK } from '../src/report/playback';
import { recordPlaybackRun } from './helpers/playback-run';
import { tempDir } from './helpers/tmp';
import { watchedPage, withChromium } from './helpers/chromium';

const HOSTILE = '<img src=x onerror="window.__pwned=1">';

test('the report plays episodes offline: frames drawn, scrubber and play move them, notes jump, timeline = recorded rewards, GIF downloads', {
  timeout: 300_000,
}, async (t) => {
  const dir = tempDir('rewardsmith-report-playback-');
  const run = path.join(dir, 'run');
  mkdirSync(run);
  const episodes = await recordPlaybackRun(run);
  const analysis = await analyzeRun(run);
  const target = episodes.find((e) => !e.success)!;
  const crafted: SuggestionRecord = {
    id: 'crafted-note',
    kind: 'no-progress',
    share: 0.25,
    message: `a note from elsewhere ${HOSTILE}`,
    evidence: '',
    episodes: [{ episode: target.episode, seed: target.seed, steps: [3, 5], note: HOSTILE }],
    episode_ids: [target.episode],
  };
  writeFileSync(path.join(run, RUN_FILES.suggestions), JSON.stringify({ ...analysis, suggestions: [...analysis.suggestions, crafted] }));
  const { file } = await writeReport([run], path.join(dir, 'report.html'));
  const html = readFileSync(file, 'utf8');
  const played =
    Math.min(REPORT_PLAYBACK.failures, episodes.filter((e) => !e.success).length) +
    Math.min(REPORT_PLAYBACK.successes, episodes.filter((e) => e.success).length);
  assert.equal((html.match(/<figure class=pb /g) ?? []).length, played);
  assert.ok(!html.includes(HOSTILE), 'the hostile note is escaped');
  assert.match(html, /&lt;img src=x onerror=&quot;window\.__pwned=1&quot;&gt;/);
  assert.doesNotMatch(html, /(src|href)=["']?(https?:)?\/\//i);

  await withChromium(t, async (browser) => {
    const { page, problems, requests } = await watchedPage(browser, { viewport: { width: 1200, height: 1400 }, acceptDownloads: true, warnings: true });
    await page.goto(pathToFileURL(file).href);
    const player = page.locator(`#run-0-playback-${target.episode}`);
    await player.locator('canvas').scrollIntoViewIfNeeded();
    await page.waitForFunction((id) => document.getElementById(id)?.dataset.frame === '0', `run-0-playback-${target.episode}`);

    const canvasState = () =>
      player.evaluate((root) => {
        const c = root.querySelector('canvas') as HTMLCanvasElement;
        // Read back through a copy, so that the player's own canvas is not read (Chromium warns about that).
        const copy = document.createElement('canvas');
        copy.width = c.width;
        copy.height = c.height;
        const ctx = copy.getContext('2d', { willReadFrequently: true })!;
        ctx.drawImage(c, 0, 0);
        const px = ctx.getImageData(0, 0, c.width, c.height).data;
        const colours = new Set<number>();
        for (let i = 0; i < px.length; i += 4) colours.add((px[i]! << 16) | (px[i + 1]! << 8) | px[i + 2]!);
        return { colours: colours.size, opaque: px[3], url: c.toDataURL() };
      });
    const start = await canvasState();
    assert.ok(start.colours >= 3, `frame 0 has ${start.colours} colours`);
    assert.equal(start.opaque, 255, 'frame 0 is drawn');
    assert.match((await player.locator('.pb-readout').textContent()) ?? '', new RegExp(`^step 0 of ${target.steps} · start · reward — .* · health 10$`));

    // The timeline is the recorded rewards, row for row (every step: the episode is short).
    const rows = await player.evaluate((root) => JSON.parse(root.querySelector('.pb-data')!.textContent!).rows as { step: number; reward: number | null }[]);
    const recorded = episodeRewards(target)!;
    assert.equal(rows.length, target.steps + 1);
    rows.slice(1).forEach((r, i) => assert.equal(r.reward, recorded[i], `step ${r.step}`));

    // The scrubber moves the frame, the readout and the cursor.
    const k = Math.min(60, target.steps);
    await player.locator('.pb-slider').fill(String(k));
    assert.equal(await player.getAttribute('data-frame'), String(k));
    const moved = await canvasState();
    assert.notEqual(moved.url, start.url, 'the frame changed');
    const readout = (await player.locator('.pb-readout').textContent()) ?? '';
    assert.match(readout, new RegExp(`^step ${k} of ${target.steps} · [a-z_]+ · reward [+−-]?\\d\\.\\d{3} \\(dense `));
    const shown = Number(/reward ([+-]?\d\.\d{3})/.exec(readout)![1]);
    assert.equal(shown, Number(recorded[k - 1]!.toFixed(3)));
    assert.notEqual(await player.locator('.pb-cursor').getAttribute('x1'), '70');

    // A note jumps to the first step it cites and is marked while its steps are shown.
    const note = player.locator('.pb-note', { hasText: 'crafted-note' });
    await note.locator('.pb-jump').click();
    assert.equal(await player.getAttribute('data-frame'), '3');
    assert.match((await note.getAttribute('class')) ?? '', /active/);
    assert.match((await note.textContent()) ?? '', /<img src=x onerror/);

    // Play advances frames; pause stops them.
    await player.locator('.pb-play').click();
    await page.waitForFunction((id) => Number(document.getElementById(id)?.dataset.frame) >= 8, `run-0-playback-${target.episode}`);
    await player.locator('.pb-play').click();
    const paused = await player.getAttribute('data-frame');
    await page.waitForTimeout(300);
    assert.equal(await player.getAttribute('data-frame'), paused);

    // The GIF is encoded in the page: one frame per row.
    const [download] = await Promise.all([page.waitForEvent('download'), player.locator('.pb-gif').click()]);
    const gifFile = path.join(dir, 'episode.gif');
    await download.saveAs(gifFile);
    const gif = readFileSync(gifFile);
    assert.equal(download.suggestedFilename(), `episode-${target.episode}.gif`);
    assert.equal(gif.subarray(0, 6).toString('ascii'), 'GIF89a');
    assert.equal(gif.toString('latin1').split('\x21\xf9\x04').length - 1, rows.length);

    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    const artifacts = process.env.REWARDSMITH_TEST_ARTIFACTS ?? dir;
    mkdirSync(artifacts, { recursive: true });
    await player.locator('.pb-slider').fill(String(Math.min(20, target.steps)));
    const shot = path.join(artifacts, 'report-playback.png');
    await player.screenshot({ path: shot });
    assert.ok(statSync(shot).size > 10_000);
    assert.deepEqual(problems, []);
    assert.deepEqual(requests, []);
  });
});
