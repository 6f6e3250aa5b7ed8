/**
 * Upgrades a user-owned file written by the previous generator, which kept the manifest's values in the
 * file itself and edited them there on every `core generate`: a router's `prefix`, `tags` and
 * `exposeSchemas`, a repository's `relationKeys` and the `reader` it passes to `super(...)`. Each such
 * member comes to read the generated `config.ts` instead (`readonly prefix = routerConfig.prefix`), the
 * import is added and the banner line saying core edits the file is replaced: a one-time change,
 * after which core never edits the file again.
 *
 * A member whose value is still the manifest's is switched to the reference; a missing one is added
 * (the previous generator would have added it too). One the user set differently — another literal,
 * an expression, a getter — is theirs and stays, reported in `kept`. The file is parsed with ts-morph
 * only to find positions; edits replace exactly the text concerned, so everything else stays byte for
 * byte.
 */
import {
  Node,
  Project,
  SyntaxKind,
  type ClassDeclaration,
  type Expression,
  type ObjectLiteralExpression,
  type SourceFile,
} from './ts-morph.js';
import { flat, literal, type Literal } from '../engine/code.js';

/** One member that comes to read `config.ts`. */
export interface ConfigMember {
  readonly name: string;
  /** The manifest's value: an initializer holding this literal is replaced by `reference`. */
  readonly value: Literal;
  /** The expression reading it from `config.ts`, e.g. `routerConfig.prefix`. */
  readonly reference: string;
  /**
   * Class properties only: the lines to insert when the class has no such member, without
   * indentation (`['override readonly tags = routerConfig.tags;']`). A `super(...)` option is inserted
   * as `name: reference`.
   */
  readonly declaration?: readonly string[];
  /** A JSDoc the previous generator wrote above the member, exactly; replaced by `doc`. */
  readonly previousDoc?: string;
  readonly doc?: string;
}

export interface UpgradeRequest {
  readonly className: string;
  /** Property declarations of the class. */
  readonly properties?: readonly ConfigMember[];
  /** Properties of the object literal passed to `super(...)` in the constructor. */
  readonly superArgument?: readonly ConfigMember[];
  /** The value `config.ts` exports that the references read, and its module (`./config.js`). */
  readonly binding: string;
  readonly from: string;
  /** The previous generator's banner line (the whole line, without its end) and the line replacing it. */
  readonly banner: { readonly previous: RegExp; readonly replacement: string };
}

export interface UpgradeResult {
  readonly content: string;
  /** The members the file keeps as it sets them, described for the user: `prefix = '/api' (the manifest says '/tasks')`. */
  readonly kept: readonly string[];
  /** Why nothing could be done (no such class, no `super({ ... })` call); `content` is then the source. */
  readonly problems: readonly string[];
}

interface Edit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

export function upgradeMembers(source: string, request: UpgradeRequest): UpgradeResult {
  const project = new Project({
    useInMemoryFileSystem: true,
    skipLoadingLibFiles: true,
    skipFileDependencyResolution: true,
  });
  const file = project.createSourceFile('file.ts', source);
  const eol = source.includes('\r\n') ? '\r\n' : '\n';
  const cls = file.getClass(request.className);
  if (!cls) return { content: source, kept: [], problems: [`no class ${request.className}`] };
  const options = request.superArgument?.length ? superOptions(cls) : undefined;
  if (request.superArgument?.length && !options)
    return {
      content: source,
      kept: [],
      problems: [`no \`super({ ... })\` call in the constructor of ${request.className}`],
    };

  const edits: Edit[] = [];
  const kept: string[] = [];
  const indent = memberIndent(source, cls);
  for (const wanted of request.properties ?? []) {
    const outcome = upgradeProperty(source, cls, wanted, indent, eol);
    if (typeof outcome === 'string') kept.push(outcome);
    else edits.push(...outcome);
  }
  for (const wanted of request.superArgument ?? []) {
    const outcome = upgradeOption(source, options!, wanted, eol);
    if (typeof outcome === 'string') kept.push(outcome);
    else edits.push(...outcome);
  }
  // Only when something reads it: an unused import would fail a strict build.
  if (edits.length > 0) edits.push(...importBinding(source, file, request.binding, request.from, eol));
  const banner = request.banner.previous.exec(source);
  if (banner)
    edits.push({ start: banner.index, end: banner.index + banner[0].length, text: request.banner.replacement });

  let content = source;
  for (const edit of edits.sort((a, b) => b.start - a.start))
    content = content.slice(0, edit.start) + edit.text + content.slice(edit.end);
  return { content, kept, problems: [] };
}

/** The edits switching a class property to its reference, or the description of the user's value kept. */
function upgradeProperty(
  source: string,
  cls: ClassDeclaration,
  wanted: ConfigMember,
  indent: string,
  eol: string,
): Edit[] | string {
  const member = cls.getMembers().find((m) => memberName(m) === wanted.name);
  if (!member) return wanted.declaration ? [insertMember(source, cls, wanted.declaration, indent, eol)] : [];
  if (!Node.isPropertyDeclaration(member)) return `${wanted.name} (computed in the class)`;
  const initializer = member.getInitializer();
  if (!initializer) return `${wanted.name} (declared without a value)`;
  if (initializer.getText() === wanted.reference) return [];
  const current = evaluate(initializer);
  if (current === NOT_LITERAL || !same(current, wanted.value)) return describeKept(wanted, initializer);

  const edits: Edit[] = [];
  // The type the previous generator wrote (`: string`) goes too: the reference carries it.
  const typeNode = member.getTypeNode();
  const start = typeNode ? member.getNameNode().getEnd() : initializer.getStart();
  edits.push({ start, end: initializer.getEnd(), text: typeNode ? ` = ${wanted.reference}` : wanted.reference });
  if (wanted.previousDoc !== undefined && wanted.doc !== undefined) {
    for (const doc of member.getJsDocs())
      if (doc.getText() === wanted.previousDoc)
        edits.push({ start: doc.getStart(), end: doc.getEnd(), text: wanted.doc });
  }
  return edits;
}

/** The same for a property of the `super({ ... })` options. */
function upgradeOption(
  source: string,
  options: ObjectLiteralExpression,
  wanted: ConfigMember,
  eol: string,
): Edit[] | string {
  const properties = options.getProperties();
  const found = properties.find(
    (p) => (Node.isPropertyAssignment(p) || Node.isShorthandPropertyAssignment(p)) && p.getName() === wanted.name,
  );
  if (found) {
    if (!Node.isPropertyAssignment(found)) return `${wanted.name} (computed in the class)`;
    const initializer = found.getInitializer()!;
    if (initializer.getText() === wanted.reference) return [];
    const current = evaluate(initializer);
    if (current === NOT_LITERAL || !same(current, wanted.value)) return describeKept(wanted, initializer);
    return [{ start: initializer.getStart(), end: initializer.getEnd(), text: wanted.reference }];
  }
  const text = `${wanted.name}: ${wanted.reference}`;
  const last = properties.at(-1);
  if (!last) return [{ start: options.getStart() + 1, end: options.getStart() + 1, text: ` ${text} ` }];
  const multiline = source.slice(options.getStart(), options.getEnd()).includes('\n');
  const after = last.getNextSiblingIfKind(SyntaxKind.CommaToken);
  if (multiline) {
    const pad = indentAt(source, last.getStart());
    return after
      ? [{ start: after.getEnd(), end: after.getEnd(), text: `${eol}${pad}${text},` }]
      : [{ start: last.getEnd(), end: last.getEnd(), text: `,${eol}${pad}${text}` }];
  }
  return [{ start: last.getEnd(), end: last.getEnd(), text: `, ${text}` }];
}

/** `prefix = '/api/tasks' (the manifest says '/tasks')`, the expression shortened to one short line. */
function describeKept(wanted: ConfigMember, initializer: Expression): string {
  const text = initializer.getText().replace(/\s+/g, ' ');
  const shown = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  return `${wanted.name} = ${shown} (the manifest says ${flat(literal(wanted.value))})`;
}

/**
 * `import { binding } from 'from';`, unless the file has it: added to an existing import of the module,
 * else as a line among the relative imports in code-unit order (where the generator puts it), else
 * after the last import.
 */
function importBinding(source: string, file: SourceFile, binding: string, from: string, eol: string): Edit[] {
  const imports = file.getImportDeclarations();
  const existing = imports.find((d) => d.getModuleSpecifierValue() === from && !d.isTypeOnly());
  if (existing) {
    const named = existing.getNamedImports();
    if (named.some((n) => (n.getAliasNode()?.getText() ?? n.getName()) === binding)) return [];
    const last = named.at(-1);
    if (last) return [{ start: last.getEnd(), end: last.getEnd(), text: `, ${binding}` }];
  }
  const line = `import { ${binding} } from '${from}';`;
  const before = imports.find((d) => d.getModuleSpecifierValue().startsWith('.') && d.getModuleSpecifierValue() > from);
  if (before) {
    const at = lineStart(source, before.getStart());
    return [{ start: at, end: at, text: `${line}${eol}` }];
  }
  const last = imports.at(-1);
  if (last) return [{ start: last.getEnd(), end: last.getEnd(), text: `${eol}${line}` }];
  const first = file.getStatements()[0];
  const at = first ? lineStart(source, first.getStart()) : source.length;
  return [{ start: at, end: at, text: `${line}${eol}${eol}` }];
}

/** The object literal of `super({ ... })` in the constructor, if written that way. */
function superOptions(cls: ClassDeclaration): ObjectLiteralExpression | undefined {
  for (const ctor of cls.getConstructors()) {
    for (const callExpr of ctor.getDescendantsOfKind(SyntaxKind.CallExpression)) {
      if (callExpr.getExpression().getKind() !== SyntaxKind.SuperKeyword) continue;
      const arg = callExpr.getArguments()[0];
      if (arg && Node.isObjectLiteralExpression(arg)) return arg;
    }
  }
  return undefined;
}

/**
 * A missing member goes before the constructor (where the generator writes such members), else after
 * the last property, else first in the class body; before a constructor, a blank line follows it.
 */
function insertMember(
  source: string,
  cls: ClassDeclaration,
  lines: readonly string[],
  indent: string,
  eol: string,
): Edit {
  const block = lines.map((line) => `${indent}${line}${eol}`).join('');
  const ctor = cls.getConstructors()[0];
  if (ctor) {
    const at = lineStart(source, ctor.getStart(true));
    return { start: at, end: at, text: `${block}${eol}` };
  }
  const last = cls.getProperties().at(-1);
  const at = last
    ? lineEnd(source, last.getEnd())
    : lineEnd(source, cls.getFirstChildByKindOrThrow(SyntaxKind.OpenBraceToken).getEnd());
  return { start: at, end: at, text: block };
}

function lineStart(source: string, position: number): number {
  return source.lastIndexOf('\n', position - 1) + 1;
}

/** Just after the newline ending the line that holds `position`. */
function lineEnd(source: string, position: number): number {
  const newline = source.indexOf('\n', position);
  return newline === -1 ? source.length : newline + 1;
}

function indentAt(source: string, position: number): string {
  return /^[ \t]*/.exec(source.slice(lineStart(source, position)))![0];
}

function memberIndent(source: string, cls: ClassDeclaration): string {
  const first = cls.getMembers()[0];
  return first ? indentAt(source, first.getStart(true)) : '  ';
}

function memberName(member: Node): string | undefined {
  return Node.isPropertyDeclaration(member) || Node.isGetAccessorDeclaration(member) || Node.isMethodDeclaration(member)
    ? member.getName()
    : undefined;
}

const NOT_LITERAL = Symbol('not a literal');
type Evaluated = Literal | typeof NOT_LITERAL;

/** The value of a literal initializer (strings, numbers, booleans, null, arrays, plain objects), or NOT_LITERAL. */
function evaluate(expr: Expression): Evaluated {
  if (Node.isAsExpression(expr) || Node.isSatisfiesExpression(expr) || Node.isParenthesizedExpression(expr))
    return evaluate(expr.getExpression());
  if (Node.isStringLiteral(expr) || Node.isNoSubstitutionTemplateLiteral(expr)) return expr.getLiteralValue();
  if (Node.isNumericLiteral(expr)) return expr.getLiteralValue();
  if (Node.isPrefixUnaryExpression(expr) && expr.getOperatorToken() === SyntaxKind.MinusToken) {
    const operand = evaluate(expr.getOperand());
    return typeof operand === 'number' ? -operand : NOT_LITERAL;
  }
  if (Node.isTrueLiteral(expr)) return true;
  if (Node.isFalseLiteral(expr)) return false;
  if (Node.isNullLiteral(expr)) return null;
  if (Node.isArrayLiteralExpression(expr)) {
    const items: Literal[] = [];
    for (const element of expr.getElements()) {
      const value = evaluate(element);
      if (value === NOT_LITERAL) return NOT_LITERAL;
      items.push(value);
    }
    return items;
  }
  if (Node.isObjectLiteralExpression(expr)) {
    const result: Record<string, Literal> = {};
    for (const property of expr.getProperties()) {
      if (!Node.isPropertyAssignment(property)) return NOT_LITERAL;
      const nameNode = property.getNameNode();
      const name = Node.isStringLiteral(nameNode)
        ? nameNode.getLiteralValue()
        : Node.isIdentifier(nameNode)
          ? nameNode.getText()
          : undefined;
      const initializer = property.getInitializer();
      if (name === undefined || !initializer) return NOT_LITERAL;
      const value = evaluate(initializer);
      if (value === NOT_LITERAL) return NOT_LITERAL;
      result[name] = value;
    }
    return result;
  }
  return NOT_LITERAL;
}

function same(a: Literal, b: Literal): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((item, i) => same(item, (b as readonly Literal[])[i]!))
    );
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  const ra = a as { readonly [key: string]: Literal };
  const rb = b as { readonly [key: string]: Literal };
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && same(ra[k]!, rb[k]!));
}
