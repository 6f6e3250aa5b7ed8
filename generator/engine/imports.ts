/**
 * The import block of a generated file, collected while its parts are built so that only what the
 * file uses is imported. Rendered in a fixed order, as a careful engineer writes them:
 *
 * 1. Node built-ins (`node:crypto`), 2. packages (`@mikro-orm/core`, `fastify`, `typebox`…),
 * 3. the framework (`@core/runtime`), 4. relative files (`../projects/models.js`, then `./models.js`).
 *
 * Within a declaration, values first, then `type` names, each sorted case-insensitively; a
 * declaration with only types is `import type { … }`. A line longer than `WIDTH` lists one name per line.
 */
import { WIDTH } from './code.js';

const FRAMEWORK = '@core/runtime';

export class Imports {
  /** Module → name → imported as a type only. */
  private readonly modules = new Map<string, Map<string, boolean>>();

  /** Imports values (classes, functions, constants) from `from`. */
  value(from: string, ...names: string[]): this {
    const entry = this.entry(from);
    for (const name of names) entry.set(name, false);
    return this;
  }

  /** Imports type-only names; a name also imported as a value stays a value import. */
  type(from: string, ...names: string[]): this {
    const entry = this.entry(from);
    for (const name of names) if (!entry.has(name)) entry.set(name, true);
    return this;
  }

  /** The import declarations, one per line (or block), without a final newline. */
  render(): string {
    return [...this.modules.entries()]
      .sort(([a], [b]) => rank(a) - rank(b) || compare(a, b))
      .map(([from, names]) => declaration(from, names))
      .join('\n');
  }

  private entry(from: string): Map<string, boolean> {
    let entry = this.modules.get(from);
    if (!entry) this.modules.set(from, (entry = new Map()));
    return entry;
  }
}

function declaration(from: string, names: ReadonlyMap<string, boolean>): string {
  const values = [...names]
    .filter(([, isType]) => !isType)
    .map(([name]) => name)
    .sort(caseInsensitive);
  const types = [...names]
    .filter(([, isType]) => isType)
    .map(([name]) => name)
    .sort(caseInsensitive);
  const typeOnly = values.length === 0;
  const specifiers = typeOnly ? types : [...values, ...types.map((t) => `type ${t}`)];
  const keyword = typeOnly ? 'import type' : 'import';
  const line = `${keyword} { ${specifiers.join(', ')} } from '${from}';`;
  if (line.length <= WIDTH) return line;
  return `${keyword} {\n${specifiers.map((s) => `  ${s},\n`).join('')}} from '${from}';`;
}

function rank(from: string): number {
  if (from.startsWith('node:')) return 0;
  if (from === FRAMEWORK) return 2;
  if (from.startsWith('.')) return 3;
  return 1;
}

/** Plain code-unit order: deterministic everywhere (no locale), and `../x` sorts before `./x`. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function caseInsensitive(a: string, b: string): number {
  return compare(a.toLowerCase(), b.toLowerCase()) || compare(a, b);
}
