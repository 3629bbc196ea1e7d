// Plain SVG for the plots the commands write (`table`'s results.svg, `sweep`'s results.svg): self-contained
// documents that open offline, with no plotting runtime. One home for the document frame and the interval marks
// the plots share; their text is escaped with escape.ts's `escapeHtml`, the one markup escape.
import { escapeHtml } from './escape';

/** A whole SVG document, width × height px on white, sans-serif 12 px, with `elements` in order; ends in a newline. */
export function svgDocument(width: number, height: number, elements: readonly string[]): string {
  return (
    [
      `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
      `<rect width="100%" height="100%" fill="#fff"/>`,
      ...elements,
      '</svg>',
    ].join('\n') + '\n'
  );
}

/** A diamond centred on (cx, cy), `rx` to each side and `ry` up and down, drawn with `style` (SVG attributes), with an optional tooltip. */
export function diamond(cx: number, cy: number, rx: number, ry: number, style: string, tooltip?: string): string {
  const d = `M ${cx} ${cy - ry} L ${cx + rx} ${cy} L ${cx} ${cy + ry} L ${cx - rx} ${cy} Z`;
  return tooltip === undefined ? `<path d="${d}" ${style}/>` : `<path d="${d}" ${style}><title>${escapeHtml(tooltip)}</title></path>`;
}

/** A vertical 95 % interval from y1 to y2 at x: a line with a cap at each end. */
export function whisker(x: number, y1: number, y2: number, cap = 6): string[] {
  const stroke = 'stroke="#000" stroke-width="1.5"';
  return [
    `<line x1="${x}" x2="${x}" y1="${y1}" y2="${y2}" ${stroke}/>`,
    ...[y1, y2].map((y) => `<line x1="${x - cap}" x2="${x + cap}" y1="${y}" y2="${y}" ${stroke}/>`),
  ];
}
