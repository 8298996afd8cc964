// The module graph of src/ has no cycle, type-only imports included: a contract lives in a leaf
// `types.ts` (pipeline/, auth/, config/), so a module that needs the type never has to import the
// implementation that needs it back. config/ produces plain data and imports no feature, and a
// types module imports only other types modules. `npm test` runs this through `npm run deps:check`.

/** The folders of src/ that hold features: what a request meets after config/ has loaded. */
const FEATURES =
  '^src/(upstream|auth|guards|mapping|aggregate|server|stream|circuit|redis|observability|admin|pipeline|router|proxy|cli|ops|response|plugins)/';

/**
 * Modules that hold types only, and the declarations types are derived from: the zod schema
 * (the settings types are its output) and the error catalogue (`ErrorCode` is its keys). Neither
 * has behaviour a request runs, and neither imports a feature.
 */
const TYPES_MODULES = '(^src/.+/types\\.ts$)';
const TYPE_SOURCES = '(^src/config/schema\\.ts$)|(^src/config/schema/)|(^src/response/errors\\.ts$)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Move the shared type into a leaf types.ts, or the shared code into a module both can import.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'config-is-data',
      severity: 'error',
      comment:
        'config/ produces validated, readonly data and imports no feature. Move the syntax both need into ' +
        'config/ (config/syntax/) and import it from the feature; compile behaviour from the data in the ' +
        'feature, called from pipeline/compile-route.ts.',
      from: { path: '^src/config/' },
      to: { path: [FEATURES, '^src/(gateway|index)\\.ts$'] },
    },
    {
      name: 'types-import-types',
      severity: 'error',
      comment:
        'A types module imports only other types modules (and node: or package types): move the type it ' +
        'needs into the leaf types.ts of its folder, and import it there from the implementation.',
      from: { path: TYPES_MODULES },
      to: { path: '^src/', pathNot: [TYPES_MODULES, TYPE_SOURCES] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Count `import type` too: a cycle through types still tangles what a reader must hold in mind.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '\\.test\\.ts$' },
  },
};
