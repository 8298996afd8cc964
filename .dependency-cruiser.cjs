// The module graph of src/ has no cycle, type-only imports included: a contract lives in a leaf
// `types.ts` (pipeline/, auth/, config/), so a module that needs the type never has to import the
// implementation that needs it back. `npm test` runs this through `npm run deps:check`.
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
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Count `import type` too: a cycle through types still tangles what a reader must hold in mind.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '\\.test\\.ts$' },
  },
};
