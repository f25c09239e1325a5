/**
 * Import rules for src/ (`npx depcruise src --config .dependency-cruiser.js`, part of `npm run lint`).
 * Folders may depend on each other in one direction only, so a module can be understood, tested and
 * changed from its own folder down; ports such as `common/work-signal.ts` and
 * `portal/portal-credentials.ts` let a lower folder be called back without importing the higher one.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A file imports itself through others (type-only imports count too): move what both need into ' +
        'a third file, or turn one direction into a port (an abstract class the other side provides).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycles',
      severity: 'error',
      comment:
        'Two folders of src/ import each other, directly or through others: keep one direction, move ' +
        'the shared piece to src/common/, or add a port (see src/common/work-signal.ts).',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'product-not-sandbox',
      severity: 'error',
      comment:
        'The sandbox portal is a test double of the vendor server: the product loads it only at run ' +
        'time in sandbox mode (src/sandbox-mode.ts), never through an import.',
      from: { path: '^src/' },
      to: { path: '^sandbox/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are edges too: a cycle of types is a cycle of concepts.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    reporterOptions: { text: { highlightFocused: false } },
  },
};
