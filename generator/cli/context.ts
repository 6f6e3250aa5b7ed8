/** The project a command works on, as a `CliError` when the command runs outside one. */
import { CliError } from './errors.js';
import { findProjectRoot, NotInProjectError } from '../project/root.js';

export function projectRoot(): string {
  try {
    return findProjectRoot();
  } catch (error) {
    if (error instanceof NotInProjectError) throw new CliError(error.message);
    throw error;
  }
}
