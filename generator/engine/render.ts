/**
 * Renders `templates/<unit>/<file>.hbs` with handlebars. Templates hold no logic: every value is
 * computed before rendering and passed in `data`. `strict` makes a value the template uses but the
 * caller forgot an error instead of an empty string; `noEscape` because nothing here is HTML.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import { repoPath } from '../project/repo.js';

export const TEMPLATES_DIR = repoPath('templates');

type Compiled = (data: Record<string, unknown>) => string;
const compiled = new Map<string, Compiled>();

/** `render('project/main.ts.hbs', { projectName })` */
export function render(template: string, data: Record<string, unknown>): string {
  let fn = compiled.get(template);
  if (!fn) {
    const source = readFileSync(join(TEMPLATES_DIR, template), 'utf8');
    fn = Handlebars.compile(source, { strict: true, noEscape: true });
    compiled.set(template, fn);
  }
  return fn(data);
}
