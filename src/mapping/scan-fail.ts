/**
 * How a strict scan of a JSON text gives up (json-scan.ts and the scans built on it): `fail`
 * throws a marker error that `scanOrUndefined` turns into undefined; any other error goes through.
 */
class NotMappable extends Error {}

/** Gives up a scan: the text is not valid JSON, or not of the shape the scan accepts. */
export const fail = (): never => {
  throw new NotMappable();
};

/** Runs a scan that throws on text that is not valid JSON (`fail`): undefined for such text. */
export function scanOrUndefined<T>(scan: () => T): T | undefined {
  try {
    return scan();
  } catch (err) {
    if (err instanceof NotMappable) return undefined;
    throw err;
  }
}
