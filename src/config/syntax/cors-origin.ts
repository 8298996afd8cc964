/** The entries of `config.cors.origins`: an origin, or a pattern for its subdomains (layers/cors.ts matches them). */

/** Why a `cors.origins` entry is unusable, or undefined. */
export function corsOriginProblem(origin: string): string | undefined {
  if (!/^https?:\/\/(\*\.)?[a-z0-9.-]+(:\d{1,5})?$/i.test(origin)) {
    return `"${origin}" is not an origin: write scheme://host[:port] with no path ("https://app.example.com", "https://*.example.com")`;
  }
  return undefined;
}
