/**
 * ts-morph, loaded with `require`. An ES module's `import` of a CommonJS package makes Node first scan
 * the package's source for its export names, and ts-morph carries TypeScript's 9 MB compiler: that
 * scan alone cost about 45 ms of every `core startapp`. `require` loads the same module without it.
 */
import { createRequire } from 'node:module';
import type * as TsMorph from 'ts-morph';

const tsMorph = createRequire(import.meta.url)('ts-morph') as typeof TsMorph;

export const Node = tsMorph.Node;
export type Node = TsMorph.Node;
export const Project = tsMorph.Project;
export type Project = TsMorph.Project;
export const SyntaxKind = tsMorph.SyntaxKind;
export type SyntaxKind = TsMorph.SyntaxKind;
export type { ClassDeclaration, Expression, ObjectLiteralExpression, SourceFile } from 'ts-morph';
