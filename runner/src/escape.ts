// The one markup escape: every value from a run, sweep or table folder (untrusted input: a name, a task, a note,
// even a field that should be a number may hold markup) that reaches HTML (the report, the sweep panel) or an SVG
// document (the plots) goes through it. Imports nothing, so the extension may use it too.

/** Text made safe in element content and in quoted attribute values, of HTML and of XML (SVG) alike. */
export const escapeHtml = (s: unknown) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
