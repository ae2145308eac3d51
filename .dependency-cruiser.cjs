// The import rules of src/ (npm run lint:imports; test/unit/import-rules.test.ts runs them too, and
// breaks each one on purpose to see it fail). The graph runs one way:
//
//   the layers above   config/ cli/ commands/ hold/ keeper/ child/ views/ metrics/ monitor/ bounds/
//                      completion/ serve/ and the root files src/*.ts
//          |           only through src/backend/index.ts
//   the face           src/backend/: index.ts, open.ts, connection.ts and the neutral vocabulary
//          |           (backend.ts, holder.ts, mode.ts, ...); only open.ts and connection.ts reach an engine
//   the engines        src/backends/<store>/: each its own, none importing another or anything above
//                      the face (they use the face's neutral modules and the root files directly)

// Every folder above the engines, and the root files src/*.ts: so no root file re-exports an engine
// around the face (above-not-into-engines covers them as it covers the folders).
const ABOVE = '^src/((config|cli|commands|hold|keeper|child|views|metrics|monitor|bounds|completion|serve)/|[^/]+$)';
// The same folders, as an engine must not import them.
const UPPER_FOLDERS = '^src/(config|cli|commands|hold|keeper|child|views|metrics|monitor|bounds|completion|serve)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'above-only-face-index',
      comment:
        'config/, cli/, commands/, hold/, keeper/, child/, views/, metrics/, monitor/, bounds/, completion/ and ' +
        'src/*.ts import src/backend/ only through its index.ts (the face), never backend.ts, open.ts, mode.ts, ...',
      severity: 'error',
      from: { path: ABOVE },
      to: { path: '^src/backend/', pathNot: '^src/backend/index[.]ts$' },
    },
    {
      name: 'above-not-into-engines',
      comment:
        'config/, cli/, commands/, hold/, keeper/, child/, views/, metrics/, monitor/, bounds/, completion/ and ' +
        'src/*.ts never import src/backends/ (an engine is reached through src/backend/index.ts)',
      severity: 'error',
      from: { path: ABOVE },
      to: { path: '^src/backends/' },
    },
    {
      name: 'engine-not-above',
      comment:
        'nothing in src/backends/ imports the layers above it, nor the face that opens it (src/backend/index.ts, ' +
        'open.ts): an engine uses the neutral modules of src/backend/ (backend.ts, holder.ts, mode.ts, ...) directly',
      severity: 'error',
      from: { path: '^src/backends/' },
      to: { path: `${UPPER_FOLDERS}|^src/backend/(index|open)[.]ts$` },
    },
    {
      name: 'engine-not-other-engine',
      comment: 'one backend never imports another: src/backends/X/ imports nothing in src/backends/Y/',
      severity: 'error',
      from: { path: '^src/backends/([^/]+)/' },
      to: { path: '^src/backends/', pathNot: '^src/backends/$1/' },
    },
    {
      name: 'face-reaches-engines-by-open-and-connection',
      comment:
        'src/backend/ reaches the engines only from open.ts (which loads an engine) and connection.ts (which ' +
        'builds its connection); the neutral vocabulary imports no engine',
      severity: 'error',
      from: { path: '^src/backend/', pathNot: '^src/backend/(open|connection)[.]ts$' },
      to: { path: '^src/backends/' },
    },
    {
      name: 'face-open-to-engine-index',
      comment:
        'src/backend/open.ts loads an engine by its entry, src/backends/<store>/index.ts, and nothing else of it',
      severity: 'error',
      from: { path: '^src/backend/open[.]ts$' },
      to: { path: '^src/backends/', pathNot: '^src/backends/[^/]+/index[.]ts$' },
    },
    {
      name: 'engine-loaded-when-opened',
      comment:
        'src/backend/open.ts imports an engine only with import(): a store is loaded when a command opens it, ' +
        'so a run on one store loads nothing of another',
      severity: 'error',
      from: { path: '^src/backend/open[.]ts$' },
      to: { path: '^src/backends/', dependencyTypesNot: ['dynamic-import'] },
    },
    {
      name: 'face-connection-to-engine-connection',
      comment:
        "src/backend/connection.ts imports only an engine's light connection module, src/backends/<store>/connection.ts",
      severity: 'error',
      from: { path: '^src/backend/connection[.]ts$' },
      to: { path: '^src/backends/', pathNot: '^src/backends/[^/]+/connection[.]ts$' },
    },
    {
      name: 'no-circular',
      comment: 'no import cycles (type-only imports included)',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: `import type` from an engine reaches past the face as much as any.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
