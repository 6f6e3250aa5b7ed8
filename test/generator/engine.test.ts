import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nameVariants, singular } from '../../generator/engine/names.js';
import { isPristine, stampGenerated, Tree } from '../../generator/engine/tree.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'core-tree-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('Tree', () => {
  it('writes nothing until commit, then creates files and their folders', () => {
    const tree = new Tree(root);
    tree.write('src/apps/tasks/models.ts', 'a', 'generated');
    expect(existsSync(join(root, 'src/apps/tasks/models.ts'))).toBe(false);
    expect(tree.read('src/apps/tasks/models.ts')).toBe('a');
    expect(tree.commit()).toEqual([{ path: 'src/apps/tasks/models.ts', kind: 'CREATE' }]);
    expect(readFileSync(join(root, 'src/apps/tasks/models.ts'), 'utf8')).toBe('a');
  });

  it('applies each overwrite rule', () => {
    writeFileSync(join(root, 'gen.ts'), stampGenerated('old\n', 'm.json'));
    writeFileSync(join(root, 'same.ts'), stampGenerated('same\n', 'm.json'));
    writeFileSync(join(root, 'edited.ts'), `${stampGenerated('old\n', 'm.json')}// my edit\n`);
    writeFileSync(join(root, 'foreign.ts'), 'handwritten\n');
    writeFileSync(join(root, 'user.ts'), 'mine\n');
    writeFileSync(join(root, 'taken.ts'), 'x\n');
    const tree = new Tree(root);
    tree.write('gen.ts', stampGenerated('new\n', 'm.json'), 'generated');
    tree.write('same.ts', stampGenerated('same\n', 'm.json'), 'generated');
    tree.write('edited.ts', stampGenerated('new\n', 'm.json'), 'generated');
    tree.write('foreign.ts', stampGenerated('new\n', 'm.json'), 'generated');
    tree.write('user.ts', 'template\n', 'user');
    tree.write('taken.ts', 'y\n', 'refuse');
    const kinds = Object.fromEntries(tree.commit().map((c) => [c.path, c.kind]));
    expect(kinds).toEqual({
      'gen.ts': 'UPDATE',
      'same.ts': 'UNCHANGED',
      'edited.ts': 'CONFLICT',
      'foreign.ts': 'CONFLICT',
      'user.ts': 'SKIP',
      'taken.ts': 'CONFLICT',
    });
    expect(readFileSync(join(root, 'edited.ts'), 'utf8')).toContain('// my edit');
    expect(readFileSync(join(root, 'user.ts'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(root, 'gen.ts'), 'utf8')).toContain('new');
  });

  it('detects a hand edit through the checksum header', () => {
    const stamped = stampGenerated('export const a = 1;\n', 'm.json');
    expect(isPristine(stamped)).toBe(true);
    expect(isPristine(stamped.replace('1', '2'))).toBe(false);
    expect(isPristine('export const a = 1;\n')).toBe(false);
  });
});

describe('names', () => {
  it('derives every name form once', () => {
    expect(nameVariants('OrderItem', 'order_items', 'order_items')).toMatchObject({
      variable: 'orderItem',
      createSchema: 'OrderItemCreate',
      outSchema: 'OrderItemOut',
      repository: 'OrderItemRepository',
      plugin: 'OrderItemsPlugin',
    });
  });

  it.each([
    ['labels', 'label'],
    ['categories', 'category'],
    ['statuses', 'status'],
    ['boxes', 'box'],
    ['people', 'person'],
    ['order_items', 'order_item'],
    ['days', 'day'],
  ])('singular(%s) = %s', (plural, expected) => {
    expect(singular(plural)).toBe(expected);
  });
});
