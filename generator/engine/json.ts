/**
 * JSON text the way the project's formatter (Biome, like Prettier) leaves it, for the JSON files core
 * writes into a project (manifests, the manifest JSON Schema): two spaces; a non-empty object one key
 * per line; an array on one line when it holds only scalars (or such arrays) and fits in the width, otherwise one item
 * per line. `JSON.stringify(value, null, 2)` breaks every array, which `biome format` would undo.
 */
import { WIDTH } from './code.js';

/** The text of `value` with a final newline. */
export function jsonText(value: unknown): string {
  return `${print(value, 0, 1)}\n`;
}

/**
 * `value` printed at `indent` spaces, starting at a column where `column` characters are already on
 * the line, and followed by `reserve` characters (a comma).
 */
function print(value: unknown, indent: number, reserve: number, column = indent): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const line = flat(value);
    if (line !== undefined && column + line.length + reserve <= WIDTH) return line;
    const pad = ' '.repeat(indent + 2);
    const items = value.map((item, i) => `${pad}${print(item, indent + 2, i < value.length - 1 ? 1 : 0)}`);
    return `[\n${items.join(',\n')}\n${' '.repeat(indent)}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return '{}';
    const pad = ' '.repeat(indent + 2);
    const lines = entries.map(([key, v], i) => {
      const head = `${pad}${JSON.stringify(key)}: `;
      return `${head}${print(v, indent + 2, i < entries.length - 1 ? 1 : 0, head.length)}`;
    });
    return `{\n${lines.join(',\n')}\n${' '.repeat(indent)}}`;
  }
  return JSON.stringify(value);
}

/** An array of scalars (or of such arrays) on one line; undefined when it holds an object. */
function flat(value: unknown): string | undefined {
  if (!Array.isArray(value)) return value !== null && typeof value === 'object' ? undefined : JSON.stringify(value);
  const items = value.map(flat);
  return items.includes(undefined) ? undefined : `[${items.join(', ')}]`;
}
