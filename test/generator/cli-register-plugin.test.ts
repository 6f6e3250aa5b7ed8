/**
 * The src/main.ts edit behind `core startapp`: positions found with ts-morph, text inserted at them,
 * nothing else touched, nothing added twice.
 */
import { describe, expect, it } from 'vitest';
import { registerPlugin, RegisterPluginError } from '../../generator/ast/register-plugin.js';

const TASKS = { className: 'TasksPlugin', importPath: './apps/tasks/plugin.js' };
const IMPORT = "import { TasksPlugin } from './apps/tasks/plugin.js';";

const BASE = `import { Kernel } from '@core/runtime';

export async function buildApp() {
  // 3. Kernel and plugins
  const kernel = new Kernel({ logger });

  registerDbEventDispatcher(kernel.dispatcher);
}
`;

describe('registerPlugin', () => {
  it.each([
    {
      name: 'a fresh main.ts: import after the last import, addPlugin right after the kernel',
      source: BASE,
      expected: BASE.replace("'@core/runtime';", `'@core/runtime';\n${IMPORT}`).replace(
        'new Kernel({ logger });',
        'new Kernel({ logger });\n  kernel.addPlugin(new TasksPlugin());',
      ),
    },
    {
      name: 'after the last addPlugin and the last app import',
      source: `import { Kernel } from '@core/runtime';
import { ProjectsPlugin } from './apps/projects/plugin.js';
import policies from './policies.json' with { type: 'json' };
const kernel = new Kernel();
kernel.addPlugin(new ProjectsPlugin());
start();
`,
      expected: `import { Kernel } from '@core/runtime';
import { ProjectsPlugin } from './apps/projects/plugin.js';
${IMPORT}
import policies from './policies.json' with { type: 'json' };
const kernel = new Kernel();
kernel.addPlugin(new ProjectsPlugin());
kernel.addPlugin(new TasksPlugin());
start();
`,
    },
    {
      name: 'another kernel variable name and tab indentation',
      source: "import { Kernel } from '@core/runtime';\nfunction f() {\n\tconst k = new Kernel();\n}\n",
      expected: `import { Kernel } from '@core/runtime';\n${IMPORT}\nfunction f() {\n\tconst k = new Kernel();\n\tk.addPlugin(new TasksPlugin());\n}\n`,
    },
    {
      name: 'Windows line endings stay Windows line endings',
      source: "import { Kernel } from '@core/runtime';\r\nconst kernel = new Kernel();\r\n",
      expected: `import { Kernel } from '@core/runtime';\r\n${IMPORT}\r\nconst kernel = new Kernel();\r\nkernel.addPlugin(new TasksPlugin());\r\n`,
    },
    {
      name: 'only the missing half: imported already, not registered',
      source: `${IMPORT}\nconst kernel = new Kernel();\n`,
      expected: `${IMPORT}\nconst kernel = new Kernel();\nkernel.addPlugin(new TasksPlugin());\n`,
    },
    {
      name: 'no import at all: the import goes first',
      source: 'const kernel = new Kernel();\n',
      expected: `${IMPORT}\nconst kernel = new Kernel();\nkernel.addPlugin(new TasksPlugin());\n`,
    },
  ])('$name', ({ source, expected }) => {
    const result = registerPlugin(source, TASKS);
    expect(result.content).toBe(expected);
    expect(result.changed).toBe(true);
    // A second pass finds everything in place.
    expect(registerPlugin(result.content, TASKS)).toEqual({ content: expected, changed: false });
  });

  it('treats a chained registration as registered', () => {
    const source = `${IMPORT}\nconst kernel = new Kernel().addPlugin(new TasksPlugin());\n`;
    expect(registerPlugin(source, TASKS)).toEqual({ content: source, changed: false });
  });

  it.each([
    { name: 'no kernel', source: 'export const x = 1;\n', message: /has no `const kernel = new Kernel\(\.\.\.\)`/ },
    {
      name: 'the class name imported from elsewhere',
      source: "import { TasksPlugin } from './legacy.js';\nconst kernel = new Kernel();\n",
      message: /already imports a TasksPlugin from '.\/legacy.js'/,
    },
  ])('refuses $name', ({ source, message }) => {
    expect(() => registerPlugin(source, TASKS)).toThrow(RegisterPluginError);
    expect(() => registerPlugin(source, TASKS)).toThrow(message);
  });
});
