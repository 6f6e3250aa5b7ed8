/**
 * The runtime's layers, lowest first: a folder of runtime/src may import its own files and the folders
 * listed before it, never one listed after it. docs/architecture.md explains each layer; keep the two
 * in step. `npm run lint` runs this check (dependency-cruiser) besides Biome.
 */
const LAYERS = [
  'util',
  'errors',
  'logging',
  'settings',
  'events',
  'kernel',
  'container',
  'context',
  'auth',
  'db',
  'model',
  'migrations',
  'schema',
  'search',
  'uow',
  'outbox',
  'data',
  'http',
  'openapi',
];

// `errors` is the one layer that is a file (runtime/src/errors.ts), not a folder.
const pathOf = (layer) => (layer === 'errors' ? '^runtime/src/errors\\.ts$' : `^runtime/src/${layer}/`);

const layerRules = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${layer}`,
  comment: `${layer} may import only the layers below it: ${LAYERS.slice(0, i).join(', ') || 'none'}`,
  severity: 'error',
  from: { path: pathOf(layer) },
  to: { path: LAYERS.slice(i + 1).map(pathOf) },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-barrel-inside',
      comment: 'runtime/src/index.ts is the public surface; the runtime itself never imports it',
      severity: 'error',
      from: { path: '^runtime/src/' },
      to: { path: '^runtime/src/index\\.ts$' },
    },
    {
      name: 'unlisted-folder',
      comment: 'every runtime/src folder must have its place in LAYERS',
      severity: 'error',
      from: { path: '^runtime/src/[^/]+/', pathNot: `^runtime/src/(${LAYERS.join('|')})/` },
      to: {},
    },
    {
      name: 'generator-uses-the-package',
      comment: 'the generator reaches the runtime through @core/runtime and @core/runtime/cli, never its sources',
      severity: 'error',
      from: { path: '^generator/' },
      to: { path: '^runtime/src/', pathNot: '^runtime/src/(index|cli)\\.ts$' },
    },
    {
      name: 'generator-no-relative-runtime',
      comment: 'a relative path into runtime/ would bypass the package exports',
      severity: 'error',
      from: { path: '^generator/' },
      to: { path: '^runtime/', dependencyTypesNot: ['aliased'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'types', 'default'],
      extensions: ['.ts', '.js'],
    },
  },
};
