/**
 * TypeScript source fragments for generated code: literals printed the way the project writes them
 * (single quotes, `{ a: 1 }` with spaces, trailing commas when broken), and a tiny width-aware printer
 * for the few expressions that can grow long (TypeBox fields, enum builders, test payloads).
 *
 * There is no formatter in the loop: generated code is formatted by construction, as the project's
 * formatter (Biome, which follows prettier) leaves it. An expression is printed on one line when it
 * fits in `WIDTH` columns; otherwise its outermost array, object or argument list is broken, one
 * element per line, hugging a trailing array or object argument (`Type.Union([` … `])`). A member
 * chain of more than two calls taking a function is broken one call per line (`brokenChain`).
 */

/** The longest line the printer aims for. */
export const WIDTH = 120;

/** A JSON-like value that has a literal form in TypeScript. */
export type Literal = string | number | boolean | null | readonly Literal[] | { readonly [key: string]: Literal };

/** A piece of code: raw text (an identifier, a literal, an arrow function…) or a breakable node. */
export type Expr = string | CallExpr | MemberExpr | ArrayExpr | ObjectExpr;

export interface CallExpr {
  readonly kind: 'call';
  readonly callee: Expr;
  readonly args: readonly Expr[];
}

export interface MemberExpr {
  readonly kind: 'member';
  readonly object: Expr;
  readonly name: string;
}

export interface ArrayExpr {
  readonly kind: 'array';
  readonly items: readonly Expr[];
}

export interface ObjectExpr {
  readonly kind: 'object';
  readonly entries: readonly (readonly [key: string, value: Expr])[];
}

export const call = (callee: Expr, ...args: Expr[]): CallExpr => ({ kind: 'call', callee, args });
export const member = (object: Expr, name: string): MemberExpr => ({ kind: 'member', object, name });
export const array = (items: readonly Expr[]): ArrayExpr => ({ kind: 'array', items });
export const object = (entries: readonly (readonly [string, Expr])[]): ObjectExpr => ({ kind: 'object', entries });

/** `a.b(x).c(y)`: a method chain, each link `[name, ...args]`. */
export function chain(head: Expr, ...links: (readonly [name: string, ...args: Expr[]])[]): Expr {
  return links.reduce<Expr>((acc, [name, ...args]) => call(member(acc, name), ...args), head);
}

/** A string literal in single quotes. */
export function str(value: string): string {
  const escaped = value.replace(/[\\'\n\r\t\u2028\u2029]/g, (c) => ESCAPES[c] ?? c);
  return `'${escaped}'`;
}

const ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  "'": "\\'",
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/** An object key: bare when it is an identifier, quoted otherwise. */
export function key(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : str(name);
}

/** A literal as an expression (objects and arrays stay breakable). */
export function literal(value: Literal): Expr {
  if (value === null) return 'null';
  if (typeof value === 'string') return str(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return array((value as readonly Literal[]).map(literal));
  return object(Object.entries(value as { readonly [key: string]: Literal }).map(([k, v]) => [k, literal(v)] as const));
}

/** An object of options, leaving out undefined values: `{ maxLength: 255, default: 'medium' }`. */
export function options(entries: readonly (readonly [string, Literal | undefined])[]): ObjectExpr | undefined {
  const present = entries.filter((entry): entry is readonly [string, Literal] => entry[1] !== undefined);
  return present.length === 0 ? undefined : object(present.map(([k, v]) => [k, literal(v)] as const));
}

/** The expression on one line. */
export function flat(expr: Expr): string {
  if (typeof expr === 'string') return expr;
  switch (expr.kind) {
    case 'call':
      return `${flat(expr.callee)}(${expr.args.map(flat).join(', ')})`;
    case 'member':
      return `${flat(expr.object)}.${expr.name}`;
    case 'array':
      return `[${expr.items.map(flat).join(', ')}]`;
    case 'object':
      return expr.entries.length === 0
        ? '{}'
        : `{ ${expr.entries.map(([k, v]) => `${key(k)}: ${flat(v)}`).join(', ')} }`;
  }
}

/**
 * Prints `expr` starting at column `column` on a line indented by `indent` spaces, with `reserve`
 * characters still to follow it on its last line (a `,` or `);`). Continuation lines are indented.
 */
export function print(expr: Expr, indent: number, column = indent, reserve = 0): string {
  if (typeof expr !== 'string' && expr.kind === 'call') {
    const broken = brokenChain(expr, indent, column);
    if (broken !== undefined) return broken;
  }
  const oneLine = flat(expr);
  if (typeof expr === 'string' || column + oneLine.length + reserve <= WIDTH) return oneLine;
  const pad = ' '.repeat(indent + 2);
  const end = ' '.repeat(indent);
  switch (expr.kind) {
    case 'array':
      if (expr.items.length === 0) return oneLine;
      return `[\n${expr.items.map((item) => `${pad}${print(item, indent + 2, indent + 2, 1)},\n`).join('')}${end}]`;
    case 'object':
      if (expr.entries.length === 0) return oneLine;
      return `{\n${expr.entries
        .map(([k, v]) => `${pad}${key(k)}: ${print(v, indent + 2, indent + 2 + key(k).length + 2, 1)},\n`)
        .join('')}${end}}`;
    case 'member': {
      const head = print(expr.object, indent, column, expr.name.length + 1 + reserve);
      return `${head}.${expr.name}`;
    }
    case 'call': {
      const callee = print(expr.callee, indent, column, 1);
      const at = lastLineLength(callee, column);
      const args = expr.args;
      if (args.length === 0) return `${callee}()`;
      const flatArgs = args.map(flat).join(', ');
      if (at + 1 + flatArgs.length + 1 + reserve <= WIDTH) return `${callee}(${flatArgs})`;
      // Hug a trailing array or object: `Type.Union([` … `])`, `defineModel(Task, {` … `})`.
      const last = args[args.length - 1]!;
      const leading = args.slice(0, -1).map(flat);
      const prefix = leading.length > 0 ? `${leading.join(', ')}, ` : '';
      if (
        typeof last !== 'string' &&
        (last.kind === 'array' || last.kind === 'object') &&
        at + 1 + prefix.length + 1 <= WIDTH
      ) {
        return `${callee}(${prefix}${print(last, indent, at + 1 + prefix.length, reserve + 1)})`;
      }
      return `${callee}(\n${args.map((arg) => `${pad}${print(arg, indent + 2, indent + 2, 1)},\n`).join('')}${end})`;
    }
  }
}

/**
 * A member chain of more than two calls, one of which takes a function, printed one call per line
 * under its head, as the formatter does (even when it would fit on one line):
 *
 * ```ts
 * p
 *   .uuid()
 *   .primary()
 *   .onCreate(() => randomUUID())
 * ```
 *
 * Undefined for any other call.
 */
function brokenChain(expr: CallExpr, indent: number, column: number): string | undefined {
  const links: { name: string; args: readonly Expr[] }[] = [];
  let head: Expr = expr;
  while (
    typeof head !== 'string' &&
    head.kind === 'call' &&
    typeof head.callee !== 'string' &&
    head.callee.kind === 'member'
  ) {
    links.unshift({ name: head.callee.name, args: head.args });
    head = head.callee.object;
  }
  // `call('p.uuid')`: the chain's first call, its callee written as text.
  if (typeof head !== 'string' && head.kind === 'call' && typeof head.callee === 'string') {
    const dot = head.callee.lastIndexOf('.');
    if (dot > 0) {
      links.unshift({ name: head.callee.slice(dot + 1), args: head.args });
      head = head.callee.slice(0, dot);
    }
  }
  if (links.length <= 2 || !links.some((link) => link.args.some(isFunction))) return undefined;
  const pad = ' '.repeat(indent + 2);
  const first = print(head, indent, column);
  return `${first}${links.map((link) => `\n${pad}${print(call(`.${link.name}`, ...link.args), indent + 2)}`).join('')}`;
}

/** An arrow function written as text: `() => new Date()`. */
function isFunction(expr: Expr): boolean {
  return typeof expr === 'string' && /^(\([^()]*\)|[\w$]+)\s*=>/.test(expr);
}

/** `name: value` (a property of an object literal) at `indent`, followed by `suffix` (`,` by default). */
export function property(name: string, value: Expr, indent: number, suffix = ','): string {
  const head = `${' '.repeat(indent)}${key(name)}: `;
  return `${head}${print(value, indent, head.length, suffix.length)}${suffix}`;
}

function lastLineLength(text: string, column: number): number {
  const newline = text.lastIndexOf('\n');
  return newline === -1 ? column + text.length : text.length - newline - 1;
}
