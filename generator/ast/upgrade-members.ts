/**
 * Keeps the few manifest-derived values of a user-owned file in step with the manifest: a router's
 * `prefix`, `tags` and `exposeSchemas`, a repository's `relationKeys` and the `reader` limits it
 * passes to `super(...)`. Nothing else of the file is touched.
 *
 * The file is parsed with ts-morph only to find positions; edits replace exactly the initializer
 * text (or insert / remove exactly one member), so the user's formatting and comments stay byte for
 * byte. Before changing anything the current initializer is evaluated: a literal with the wanted
 * value is left alone however it is written (`["tasks"]` is `['tasks']`), and an initializer that
 * is not a literal (`process.env.PREFIX ?? '/tasks'`) is the user's decision and is left alone too.
 * Running it twice changes nothing the second time.
 */
import {
  Node,
  Project,
  SyntaxKind,
  type ClassDeclaration,
  type Expression,
  type ObjectLiteralExpression,
} from './ts-morph.js';
import { print, literal, type Literal } from '../engine/code.js';

/** One value to keep in step. */
export interface MemberSync {
  readonly name: string;
  /** The wanted value; `undefined`: the member should not be there (removed when it holds a literal). */
  readonly value: Literal | undefined;
  /**
   * Lines to insert when the member is missing, without indentation, e.g.
   * `['readonly prefix: string = \'/tasks\';']` (class members) — for a `super(...)` argument
   * property only `name: value` is inserted and this is ignored.
   */
  readonly declaration?: readonly string[];
}

export interface SyncRequest {
  readonly className: string;
  /** Property declarations of the class. */
  readonly properties?: readonly MemberSync[];
  /** Properties of the object literal passed to `super(...)` in the constructor. */
  readonly superArgument?: readonly MemberSync[];
}

export interface SyncResult {
  readonly content: string;
  /** What could not be applied (the class or the `super({...})` call is missing), for the user. */
  readonly problems: readonly string[];
}

interface Edit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

export function syncMembers(source: string, request: SyncRequest): SyncResult {
  const project = new Project({
    useInMemoryFileSystem: true,
    skipLoadingLibFiles: true,
    skipFileDependencyResolution: true,
  });
  const file = project.createSourceFile('file.ts', source);
  const eol = source.includes('\r\n') ? '\r\n' : '\n';
  const cls = file.getClass(request.className);
  if (!cls) return { content: source, problems: [`no class ${request.className}`] };

  const edits: Edit[] = [];
  const problems: string[] = [];
  const indent = memberIndent(source, cls);
  for (const wanted of request.properties ?? []) edits.push(...syncProperty(source, cls, wanted, indent, eol));
  if (request.superArgument && request.superArgument.length > 0) {
    const options = superOptions(cls);
    if (!options) problems.push(`no \`super({ ... })\` call in the constructor of ${request.className}`);
    else for (const wanted of request.superArgument) edits.push(...syncObjectProperty(source, options, wanted, eol));
  }

  let content = source;
  for (const edit of edits.sort((a, b) => b.start - a.start))
    content = content.slice(0, edit.start) + edit.text + content.slice(edit.end);
  return { content, problems };
}

function syncProperty(source: string, cls: ClassDeclaration, wanted: MemberSync, indent: string, eol: string): Edit[] {
  const member = cls.getMembers().find((m) => memberName(m) === wanted.name);
  if (member && !Node.isPropertyDeclaration(member)) return []; // a getter or method: the user computes it
  if (!member) {
    if (wanted.value === undefined || !wanted.declaration) return [];
    return [insertMember(source, cls, wanted.declaration, indent, eol)];
  }
  const initializer = member.getInitializer();
  if (!initializer) return [];
  const current = evaluate(initializer);
  if (current === NOT_LITERAL) return [];
  if (wanted.value === undefined) return [removeLines(source, member.getStart(true), member.getEnd())];
  if (same(current, wanted.value)) return [];
  const column = initializer.getStart() - source.lastIndexOf('\n', initializer.getStart() - 1) - 1;
  return [
    {
      start: initializer.getStart(),
      end: initializer.getEnd(),
      text: print(literal(wanted.value), indent.length, column, 1),
    },
  ];
}

function syncObjectProperty(source: string, options: ObjectLiteralExpression, wanted: MemberSync, eol: string): Edit[] {
  const properties = options.getProperties();
  const index = properties.findIndex((p) => Node.isPropertyAssignment(p) && p.getName() === wanted.name);
  const found = index === -1 ? undefined : properties[index]!;
  if (found && Node.isPropertyAssignment(found)) {
    const initializer = found.getInitializer();
    const current = initializer ? evaluate(initializer) : NOT_LITERAL;
    if (!initializer || current === NOT_LITERAL) return [];
    if (wanted.value === undefined) {
      // Take the separating comma with it: the one before (or, for the first property, the one after).
      if (index > 0) return [{ start: properties[index - 1]!.getEnd(), end: found.getEnd(), text: '' }];
      const next = properties[1];
      return [{ start: found.getStart(), end: next ? next.getStart() : found.getEnd(), text: '' }];
    }
    if (same(current, wanted.value)) return [];
    return [
      {
        start: initializer.getStart(),
        end: initializer.getEnd(),
        text: print(literal(wanted.value), 4, initializer.getStart() - lineStart(source, initializer.getStart()), 1),
      },
    ];
  }
  if (wanted.value === undefined) return [];
  const text = `${wanted.name}: ${print(literal(wanted.value), 4)}`;
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
 * the last property, else first in the class body; a blank line separates it from what follows.
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

/**
 * Removes whole lines from the one holding `start` to the one holding `end`, and one blank line
 * after them (the separator the member had), so the class reads as if it was never there.
 */
function removeLines(source: string, start: number, end: number): Edit {
  let stop = lineEnd(source, end);
  const next = lineEnd(source, stop);
  if (next > stop && source.slice(stop, next).trim() === '') stop = next;
  return { start: lineStart(source, start), end: stop, text: '' };
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
