// The table's plot as a self-contained SVG (no network, no plotting runtime): per task, one bar per method
// at the mean held-out success with its 95 % interval as a whisker, and the paper's published
// figure for the same method as a hollow diamond beside it.
import type { BootstrapEstimate } from '../stats';
import { escapeHtml as esc } from '../escape';
import { diamond, svgDocument, whisker } from '../svg';

export interface PlotRow {
  task: string;
  method: 'foundation' | 'sparse' | 'dense';
  estimate: BootstrapEstimate;
  paper: number | null;
}

const COLOURS = { foundation: '#8c8c8c', sparse: '#4e79a7', dense: '#e15759' } as const;
const LABELS = { foundation: 'foundation', sparse: 'foundation + sparse', dense: 'foundation + dense' } as const;
/** The paper's published figure: a hollow diamond. */
const PAPER_MARK = 'fill="#fff" stroke="#000" stroke-width="1.5"';

export function renderPlot(rows: readonly PlotRow[], title: string): string {
  const tasks = [...new Set(rows.map((r) => r.task))];
  const methods = ['foundation', 'sparse', 'dense'] as const;
  const left = 56,
    right = 20,
    top = 48,
    bottom = 84,
    plotH = 260;
  const groupW = 200,
    barW = 40,
    gap = 12;
  const width = Math.max(660, left + right + tasks.length * groupW);
  const height = top + plotH + bottom;
  const y = (v: number) => top + plotH * (1 - Math.max(0, Math.min(1, v)));
  const parts: string[] = [`<text x="${left}" y="20" font-size="14" font-weight="bold">${esc(title)}</text>`];
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    parts.push(`<line x1="${left}" x2="${width - right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
    parts.push(`<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${v * 100}%</text>`);
  }
  parts.push(`<text transform="translate(14 ${top + plotH / 2}) rotate(-90)" text-anchor="middle">held-out success</text>`);
  tasks.forEach((task, g) => {
    const x0 = left + g * groupW + (groupW - (3 * barW + 2 * gap)) / 2;
    methods.forEach((m, k) => {
      const row = rows.find((r) => r.task === task && r.method === m);
      const x = x0 + k * (barW + gap);
      if (row && row.estimate.n > 0) {
        const e = row.estimate;
        parts.push(
          `<rect x="${x}" y="${y(e.mean)}" width="${barW}" height="${y(0) - y(e.mean)}" fill="${COLOURS[m]}"><title>${esc(`${task}, ${LABELS[m]}: ${(e.mean * 100).toFixed(1)} % [${(e.ci95[0] * 100).toFixed(1)}, ${(e.ci95[1] * 100).toFixed(1)}], ${e.groups} seeds, ${e.n} episodes`)}</title></rect>`,
        );
        const cx = x + barW / 2;
        parts.push(...whisker(cx, y(e.ci95[0]), y(e.ci95[1])));
        parts.push(`<text x="${cx}" y="${y(e.ci95[1]) - 5}" text-anchor="middle" font-size="10">${(e.mean * 100).toFixed(0)}</text>`);
      }
      if (row && row.paper !== null) {
        const paper = `paper (MineDojo), ${m === 'sparse' ? 'sparse reward RL' : 'Auto MC-Reward'}: ${row.paper} %`;
        parts.push(diamond(x + barW + 1, y(row.paper / 100), 5, 5, PAPER_MARK, paper));
      }
    });
    parts.push(`<text x="${left + g * groupW + groupW / 2}" y="${top + plotH + 18}" text-anchor="middle">${esc(task)}</text>`);
  });
  // Legend.
  let lx = left;
  const ly = top + plotH + 44;
  for (const m of methods) {
    parts.push(`<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${COLOURS[m]}"/><text x="${lx + 16}" y="${ly}">${LABELS[m]}</text>`);
    lx += 150;
  }
  parts.push(`${diamond(lx + 6, ly - 4, 6, 6, PAPER_MARK)}<text x="${lx + 16}" y="${ly}">paper (MineDojo)</text>`);
  parts.push(
    `<text x="${left}" y="${ly + 22}" fill="#555">bars: mean over seeds; whiskers: 95 % interval (Wilson over one seed, else bootstrap over seeds and episodes)</text>`,
  );
  return svgDocument(width, height, parts);
}
