/**
 * Prints one closing line, `tests: N passed, N failed, N skipped`, plus how many PostgreSQL tests ran,
 * so a CI log shows at a glance that both databases were exercised.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    let postgres = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
        if (state === 'passed' && test.fullName.includes('[postgresql]')) postgres++;
      }
    }
    process.stdout.write(
      `\nPostgreSQL tests passed: ${postgres}\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`,
    );
  }
}
