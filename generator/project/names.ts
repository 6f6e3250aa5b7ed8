/**
 * The names a user types: a project name (folder, npm package name, PostgreSQL database name) and a
 * module name (app folder under `src/apps/`, table-like namespace, plugin class `<Pascal>Plugin`).
 * Each check returns what is wrong, or null.
 */

const PROJECT_NAME = /^[a-z][a-z0-9]*([_-][a-z0-9]+)*$/;
const MODULE_NAME = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const MAX_LENGTH = 63; // PostgreSQL identifiers; also keeps folder and class names sane

export function projectNameProblem(name: string): string | null {
  if (!PROJECT_NAME.test(name)) {
    return `invalid project name ${JSON.stringify(name)}: use lower case letters, digits, "-" or "_", starting with a letter (e.g. my_api or my-api)`;
  }
  if (name.length > MAX_LENGTH) return `invalid project name ${JSON.stringify(name)}: at most ${MAX_LENGTH} characters`;
  if (name === 'node_modules') return 'invalid project name "node_modules": choose another name';
  return null;
}

export function moduleNameProblem(name: string): string | null {
  if (!MODULE_NAME.test(name)) {
    return `invalid module name ${JSON.stringify(name)}: use lower snake_case, starting with a letter (e.g. tasks or order_items)`;
  }
  if (name.length > MAX_LENGTH) return `invalid module name ${JSON.stringify(name)}: at most ${MAX_LENGTH} characters`;
  return null;
}
