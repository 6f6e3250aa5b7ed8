/**
 * `npm run bench -- --instructions` reads callgrind's output: self cost per function, where the line
 * after `calls=` is the call's inclusive cost (already counted in the callee's own lines) and names
 * are compressed (`(3) name` defines, `(3)` refers). Checked on a hand-written file and on what
 * callgrind writes for a small Node program, whose main thread must count the loop it runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chargeBuiltinsToCallers, instructionsUnavailable, selfCosts } from '../../bench/lib/instructions.js';

describe('selfCosts', () => {
  it('sums each function’s own lines, not the inclusive cost of its calls, across compressed names', () => {
    const text = [
      'events: Ir',
      'fn=(1) main',
      '10 100',
      '+1 50',
      'cfn=(2) helper',
      'calls=3 20',
      '11 900',
      '* 7',
      'fn=(2)',
      '20 300',
      'cfn=(1)',
      'calls=1 10',
      '21 4000',
      'fn=(3) 0x000000000d2248c0',
      '0x10 40',
      'summary: 497',
    ].join('\n');
    const { total, byFunction } = selfCosts(text);
    expect(Object.fromEntries(byFunction)).toEqual({ main: 157, helper: 300, '0x000000000d2248c0': 40 });
    expect(total).toBe(497);
  });

  it("charges a builtin's own cost to its callers by the cost of their calls; totals stay", () => {
    const text = [
      'fn=(1) 0x10',
      '1 100',
      'cfn=(3) Builtins_KeyedLoadIC_Megamorphic',
      'calls=2 1',
      '2 30',
      'fn=(2) 0x20',
      '1 200',
      'cfn=(3)',
      'calls=1 1',
      '2 10',
      'fn=(3)',
      '1 40',
    ].join('\n');
    const { byFunction, callers } = selfCosts(text);
    const charged = chargeBuiltinsToCallers(byFunction, callers);
    expect(Object.fromEntries(charged)).toEqual({ '0x10': 130, '0x20': 210, Builtins_KeyedLoadIC_Megamorphic: 0 });
  });
});

const unavailable = instructionsUnavailable();
if (unavailable) console.log(`callgrind tests skipped: ${unavailable}`);

describe.skipIf(unavailable !== null)('selfCosts on callgrind’s own output', () => {
  const dir = mkdtempSync(join(tmpdir(), 'core-callgrind-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('counts a program’s main thread, and twice the loop costs more', { timeout: 180_000 }, () => {
    const run = (iterations: number): number => {
      const out = join(dir, `n${iterations}.out`);
      const script = `let x = 0; for (let i = 0; i < ${iterations}; i++) x += Math.sqrt(i); if (x < 0) console.log(x);`;
      const done = spawnSync(
        'valgrind',
        [
          '--tool=callgrind',
          '--smc-check=all-non-file',
          '--separate-threads=yes',
          `--callgrind-out-file=${out}`,
          process.execPath,
          '--jitless',
          '-e',
          script,
        ],
        { encoding: 'utf8' },
      );
      expect(done.status, done.stderr).toBe(0);
      const main = readdirSync(dir).find((f) => f.startsWith(`n${iterations}.out`) && f.endsWith('-01'));
      expect(main, readdirSync(dir).join(', ')).toBeDefined();
      const text = readFileSync(join(dir, main!), 'utf8');
      const { total } = selfCosts(text);
      // The file's own total (`summary:` or `totals:`) is what the per-function costs add up to.
      expect(total).toBe(Number(/^(?:summary|totals): (\d+)/m.exec(text)![1]));
      return total;
    };
    const once = run(200_000);
    const twice = run(400_000);
    expect(twice).toBeGreaterThan(once);
  });
});
