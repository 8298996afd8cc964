/**
 * An uptime in words, the same on the status page and in `portico status`. It imports nothing:
 * scripts/gen-admin-page.ts compiles it into the page's script, where Node code cannot go.
 */

/** Seconds in their two largest units: `2 d 3 h`, `4 h 5 min`, `6 min 7 s` or `8 s`. */
export function formatDuration(sec: number): string {
  const d = Math.floor(sec / 86400);
  const h = Math.floor((sec % 86400) / 3600);
  const m = Math.floor((sec % 3600) / 60);
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  return m > 0 ? `${m} min ${sec % 60} s` : `${sec} s`;
}
