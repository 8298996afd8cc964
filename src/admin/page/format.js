// How the page writes milliseconds, byte counts and times.

/** Milliseconds: two decimals under 10, one under 100, none from 100 up; a dash without a value. */
export function ms(value) {
  if (value === null || value === undefined) return '–';
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : String(Math.round(value));
}

/** A time of day in the browser's locale. */
export const clock = (iso) => new Date(iso).toLocaleTimeString();

/** A byte count: B, KiB or MiB with one decimal from KiB up. */
export function bytes(value) {
  if (value < 1024) return `${value} B`;
  return value < 1024 * 1024 ? `${(value / 1024).toFixed(1)} KiB` : `${(value / 1024 / 1024).toFixed(1)} MiB`;
}
