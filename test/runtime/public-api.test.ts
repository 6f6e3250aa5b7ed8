/**
 * The runtime's public surface: every name `@core/runtime` and `@core/runtime/cli` export, values and
 * types, compared with a snapshot so that adding or removing one is a visible decision. The snapshot
 * alone could be updated to hide a leak, so the internals that must stay inside and the building
 * blocks the README documents are also checked by name.
 */
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../runtime/src/', import.meta.url));
const ENTRIES = { '@core/runtime': `${SRC}index.ts`, '@core/runtime/cli': `${SRC}cli.ts` } as const;

/** `name (value|type)` for every export of each entry, sorted. */
function surface(): Record<keyof typeof ENTRIES, string[]> {
  const program = ts.createProgram(Object.values(ENTRIES), {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const out = {} as Record<keyof typeof ENTRIES, string[]>;
  for (const [name, file] of Object.entries(ENTRIES) as [keyof typeof ENTRIES, string][]) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`cannot read the exports of ${file}`);
    out[name] = checker
      .getExportsOfModule(module)
      .map((symbol) => {
        const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
        return `${symbol.name} (${target.flags & ts.SymbolFlags.Value ? 'value' : 'type'})`;
      })
      .sort();
  }
  return out;
}

const exported = surface();
const root = new Set(exported['@core/runtime'].map((entry) => entry.split(' ')[0]));

describe('public API of @core/runtime', () => {
  it('matches the snapshot (update it in the commit that changes the surface, and say why)', async () => {
    const text = Object.entries(exported)
      .map(([entry, names]) => `# ${entry} (${names.length})\n${names.join('\n')}\n`)
      .join('\n');
    await expect(text).toMatchFileSnapshot('./__snapshots__/public-api.txt');
  });

  it('keeps internals inside the package', () => {
    const internals = [
      'sendCore',
      'DatabaseManager',
      'parseDatabaseUrl',
      'registeredModels',
      'registerModel',
      'attachEventBroker',
      'detachEventBroker',
      'CursorCodec',
      'frameworkErrorHandler',
      'methodNotAllowedOr404',
      'bridgeEntityEvents',
      'applyCoreMigrations',
      'requestStorage',
      'JwksKeyStore',
    ];
    expect(internals.filter((name) => root.has(name))).toEqual([]);
  });

  it('exports the building blocks the README and the generated code use', () => {
    const documented = [
      'BaseRouter',
      'BaseService',
      'BaseRepository',
      'SearchEngine',
      'BaseQuery',
      'ModelReader',
      'UnitOfWork',
      'ContextSchema',
      'defineModel',
      'Base',
      'Kernel',
      'Plugin',
      'Dispatcher',
      'domainEvent',
      'registerDbEventDispatcher',
      'container',
      'Inject',
      'ScopedDependencyMiddleware',
      'coreContextPlugin',
      'useCoreRequest',
      'useCoreErrors',
      'CoreAPIRoute',
      'CoreJSONResponse',
      'coreOpenApi',
      'swaggerUiOnDemand',
      'listenWithLifecycle',
      'coreHealthRoutes',
      'loadSettings',
      'setupLogging',
      'dbManager',
      'Database',
      'getContext',
      'AppException',
      'ValidationError',
      'NotFoundError',
      'ForbiddenError',
      'ConflictError',
      'signToken',
      'applyMigrations',
    ];
    expect(documented.filter((name) => !root.has(name))).toEqual([]);
  });

  it('gives the CLI what it needs and nothing of the app surface', () => {
    expect(exported['@core/runtime/cli'].map((entry) => entry.split(' ')[0]).sort()).toEqual(
      [
        'LoadSettingsOptions',
        'parseDuration',
        'Settings',
        'SettingsError',
        'SignTokenOptions',
        'loadSettings',
        'signToken',
        'singular',
      ].sort(),
    );
  });
});
