/**
 * Registers an app's plugin in `src/main.ts`: an import of its class and a
 * `kernel.addPlugin(new XPlugin());` statement after the last one (or right after
 * `const kernel = new Kernel(...)`). The file is parsed with ts-morph only to find positions; the
 * edit inserts text at those positions, so the user's formatting and comments stay byte for byte.
 * Idempotent: what is already there is not added again.
 */
import { Node, Project, SyntaxKind, type SourceFile } from './ts-morph.js';

export interface PluginRegistration {
  className: string;
  /** Import specifier, e.g. `./apps/tasks/plugin.js`. */
  importPath: string;
}

export interface RegisterResult {
  content: string;
  changed: boolean;
}

export class RegisterPluginError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegisterPluginError';
  }
}

export function registerPlugin(source: string, plugin: PluginRegistration, fileName = 'src/main.ts'): RegisterResult {
  const project = new Project({
    useInMemoryFileSystem: true,
    skipLoadingLibFiles: true,
    skipFileDependencyResolution: true,
  });
  const file = project.createSourceFile('main.ts', source);
  const eol = source.includes('\r\n') ? '\r\n' : '\n';
  const inserts: { at: number; text: string }[] = [];

  if (!hasImport(file, plugin, fileName)) {
    const imports = file.getImportDeclarations();
    const appImports = imports.filter((d) => d.getModuleSpecifierValue().startsWith('./apps/'));
    const after = appImports.at(-1) ?? imports.at(-1);
    const statement = `import { ${plugin.className} } from '${plugin.importPath}';`;
    inserts.push(after ? { at: after.getEnd(), text: `${eol}${statement}` } : { at: 0, text: `${statement}${eol}` });
  }

  const kernel = findKernel(file);
  if (!kernel) {
    throw new RegisterPluginError(
      `${fileName} has no \`const kernel = new Kernel(...)\`; add \`kernel.addPlugin(new ${plugin.className}())\` to it yourself (or pass --no-register)`,
    );
  }
  const calls = addPluginCalls(file, kernel.name);
  if (!calls.registered.has(plugin.className)) {
    const anchor = calls.statements.at(-1) ?? kernel.statement;
    inserts.push({
      at: anchor.getEnd(),
      text: `${eol}${indentOf(source, anchor.getStart())}${kernel.name}.addPlugin(new ${plugin.className}());`,
    });
  }

  let content = source;
  for (const { at, text } of inserts.sort((a, b) => b.at - a.at))
    content = content.slice(0, at) + text + content.slice(at);
  return { content, changed: inserts.length > 0 };
}

function hasImport(file: SourceFile, plugin: PluginRegistration, fileName: string): boolean {
  for (const declaration of file.getImportDeclarations()) {
    const named = declaration
      .getNamedImports()
      .find((n) => (n.getAliasNode()?.getText() ?? n.getName()) === plugin.className);
    if (!named) continue;
    if (declaration.getModuleSpecifierValue() === plugin.importPath && named.getName() === plugin.className)
      return true;
    throw new RegisterPluginError(
      `${fileName} already imports a ${plugin.className} from '${declaration.getModuleSpecifierValue()}'; rename that import, then run the command again`,
    );
  }
  return false;
}

/** The statement declaring the kernel (`const kernel = new Kernel(...)`, possibly chained) and its variable name. */
function findKernel(file: SourceFile): { name: string; statement: Node } | null {
  for (const declaration of file.getDescendantsOfKind(SyntaxKind.VariableDeclaration)) {
    const init = declaration.getInitializer();
    if (!init) continue;
    const created = init.isKind(SyntaxKind.NewExpression)
      ? init
      : init.getFirstDescendantByKind(SyntaxKind.NewExpression);
    if (created?.getExpression().getText() !== 'Kernel') continue;
    const statement = declaration.getFirstAncestorByKind(SyntaxKind.VariableStatement);
    if (statement) return { name: declaration.getName(), statement };
  }
  return null;
}

/**
 * The plugin classes already passed to `addPlugin(new X())` anywhere (chained calls included), and
 * the `<kernel>.addPlugin(...);` statements, which are where a new line goes.
 */
function addPluginCalls(file: SourceFile, kernelName: string): { registered: Set<string>; statements: Node[] } {
  const registered = new Set<string>();
  const statements: Node[] = [];
  for (const call of file.getDescendantsOfKind(SyntaxKind.CallExpression)) {
    const callee = call.getExpression();
    if (!Node.isPropertyAccessExpression(callee) || callee.getName() !== 'addPlugin') continue;
    const arg = call.getArguments()[0];
    if (arg && Node.isNewExpression(arg)) registered.add(arg.getExpression().getText());
    const statement = call.getParentIfKind(SyntaxKind.ExpressionStatement);
    if (statement && callee.getExpression().getText() === kernelName) statements.push(statement);
  }
  return { registered, statements };
}

function indentOf(source: string, position: number): string {
  const lineStart = source.lastIndexOf('\n', position - 1) + 1;
  return /^[ \t]*/.exec(source.slice(lineStart))![0];
}
