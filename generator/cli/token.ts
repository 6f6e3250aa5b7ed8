/**
 * `core token --role <role>[,<role>] [--sub <id>] [--expires <dur>]`: prints an HS256 JWT signed
 * with the project's SECRET_KEY, the kind of token the app accepts (`Authorization: Bearer …`).
 * Only the token goes to stdout, so `TOKEN=$(core token --role admin)` works.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { CliError } from './errors.js';
import { projectRoot } from './context.js';
import { info, warn } from './output.js';

interface TokenOptions {
  role: string;
  sub?: string;
  expires: string;
}

export function tokenCommand(): Command {
  return new Command('token')
    .description("print a JWT signed with the project's SECRET_KEY, for trying the API")
    .requiredOption('--role <roles>', 'role(s) from src/policies.json, comma separated (e.g. admin or viewer,auditor)')
    .option('--sub <id>', 'the subject (user id) claim')
    .option('--expires <duration>', 'lifetime: seconds or 30m, 12h, 7d, 2w', '1h')
    .addHelpText(
      'after',
      `
Examples:
  core token --role admin
  curl -H "Authorization: Bearer $(core token --role viewer --sub alice)" http://127.0.0.1:8000/tasks/`,
    )
    .action(async (options: TokenOptions) => runToken(options));
}

async function runToken(options: TokenOptions): Promise<void> {
  const roles = options.role.split(',').map((r) => r.trim());
  if (roles.some((r) => r === ''))
    throw new CliError(`--role needs role names separated by commas, got ${JSON.stringify(options.role)}`);
  const root = projectRoot();
  const { projectSettings } = await import('./settings.js');
  const { settings, warnings } = projectSettings(root);
  if (settings.secretKeyIsEphemeral) {
    throw new CliError(
      `the project has no SECRET_KEY (not in the environment nor in ${join(root, '.env')}); add SECRET_KEY=<64 hex characters> to .env, e.g. from \`openssl rand -hex 32\``,
    );
  }
  for (const message of warnings) warn(message);
  for (const role of unknownRoles(root, roles)) warn(`role "${role}" is not in src/policies.json: it grants nothing`);

  const { signToken, parseDuration } = await import('@core/runtime/cli');
  let expiresIn: number;
  try {
    expiresIn = parseDuration(options.expires);
  } catch {
    throw new CliError(
      `--expires must be seconds or a duration such as 30m, 12h, 7d; got ${JSON.stringify(options.expires)}`,
    );
  }
  info(signToken({ roles, sub: options.sub, expiresIn }, settings.secretKey));
}

/** Roles missing from the project's policies (only when the file is readable; the app validates it). */
function unknownRoles(root: string, roles: readonly string[]): string[] {
  const file = join(root, 'src', 'policies.json');
  if (!existsSync(file)) return [];
  try {
    const policies = JSON.parse(readFileSync(file, 'utf8')) as { roles?: Record<string, unknown> };
    return policies.roles ? roles.filter((role) => !(role in policies.roles!)) : [];
  } catch {
    return [];
  }
}
