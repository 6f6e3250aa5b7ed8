import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, pointerToPath } from '@core/runtime';

describe('error table', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

  it('gives every code its own status', () => {
    const statuses = Object.values(ERROR_CODES).map((e) => e.status);
    expect(new Set(statuses).size).toBe(statuses.length);
  });

  it.each(Object.entries(ERROR_CODES))('documents %s in the README with its status', (code, { status }) => {
    expect(readme).toMatch(new RegExp(`\\| ${status} \\| \`${code}\` \\|`));
  });
});

describe('pointerToPath', () => {
  it.each([
    ['', ''],
    ['/title', 'title'],
    ['/filters/1/items/0/field', 'filters[1].items[0].field'],
    ['/tags/0', 'tags[0]'],
    ['/a~1b/c', '["a/b"].c'],
    ['/with space', '["with space"]'],
  ])('%s → %s', (pointer, path) => {
    expect(pointerToPath(pointer)).toBe(path);
  });
});
