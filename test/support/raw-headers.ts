/**
 * Header lists in their raw form (Node's `rawHeaders`, undici's raw response list), written as
 * the `Name: value` lines of a message head so that a long list reads as the head it stands for.
 */

/** The flat raw list (name, value, name, value, ...) of `Name: value` lines, in the order and case written. */
export function rawHeaderList(lines: string): string[] {
  return lines
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .flatMap((line) => {
      const colon = line.indexOf(': ');
      return [line.slice(0, colon), line.slice(colon + 2)];
    });
}
